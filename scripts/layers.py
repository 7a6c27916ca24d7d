#!/usr/bin/env python3
"""(Kept in the repository so that the suite checks the layering: scripts/test.sh runs it.
Changed from the shared copy: a `#[cfg(test)]` module is left out; `super` in a `mod.rs` resolves to the parent module, as in Rust
(the shared copy resolved it to the module itself and missed `node/keyspace.rs` <->
`node/scripting/mod.rs`); `--allow-cycle` names one allowed cycle exactly.)
Import graph of a Rust crate's src/, file by file, from `use crate::`, `use super::` and inline
`crate::a::b` paths. Prints the import cycles (strongly connected components of more than one file)
and, given --into PREFIX, every import of a file under PREFIX from a file outside it and outside
the --writer prefixes. Exits 1 when it prints any.
Usage: layers.py SRC [--allow-cycle-within PREFIX]... [--allow-cycle FILE,FILE...]... [--into PREFIX [--writer PREFIX]...]"""
import re, sys, os
from itertools import chain

def modules(src):
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if not n.endswith('.rs'): continue
            p = os.path.relpath(os.path.join(root, n), src)
            parts = p[:-3].split('/')
            if parts[-1] in ('mod', 'lib', 'main'): parts = parts[:-1]
            files[tuple(parts)] = p
    return files

def refs(text, here, is_dir_mod):
    # A file's tests (its `#[cfg(test)]` module, last in the file) may reach
    # any module of the crate: they are not part of the layering.
    text = text.split('#[cfg(test)]')[0]
    text = re.sub(r'//[^\n]*', '', text)
    out = set()
    # expand `use x::{a, b::{c}}` roughly: collect every path prefix ending before { or ,
    for m in re.finditer(r'\buse\s+([^;]+);', text):
        body = re.sub(r'\s+', '', m.group(1))
        stack = ['']
        tok = ''
        for ch in body + ',':
            if ch == '{':
                stack.append(stack[-1] + tok); tok = ''
            elif not (ch.isalnum() or ch in ':_,}*'):
                tok = ''
            elif ch in ',}':
                if tok: out.add(stack[-1] + tok)
                tok = ''
                if ch == '}' and len(stack) > 1: stack.pop()
            else:
                tok += ch
    for m in re.finditer(r'\b((?:crate|super)(?:::\w+)+)', text):
        out.add(m.group(1))
    res = set()
    base = list(here) if is_dir_mod else list(here[:-1])
    for r in out:
        segs = r.split('::')
        if segs[0] == 'crate': path = segs[1:]
        elif segs[0] == 'super':
            # `super` is the parent of the module: for a file `a/b.rs` that is
            # `a` (base), for `a/b/mod.rs` it is `a` too (base is `a/b`).
            b = base[:]; i = 0
            while i < len(segs) and segs[i] == 'super':
                b = b[:-1] if (i > 0 or is_dir_mod) else b; i += 1
            path = b + segs[i:]
        elif segs[0] == 'self': path = list(here) + segs[1:]
        else: continue
        res.add(tuple(path))
    return res

def resolve(path, files):
    for k in range(len(path), 0, -1):
        if tuple(path[:k]) in files: return tuple(path[:k])
    return None

def graph(src):
    files = modules(src)
    g = {}
    for mod, p in files.items():
        text = open(os.path.join(src, p)).read()
        is_dir = os.path.basename(p) in ('mod.rs', 'lib.rs', 'main.rs')
        tgt = set()
        for r in refs(text, mod, is_dir):
            t = resolve(list(r), files)
            if t is not None and t != mod and t != (): tgt.add(t)
        g[files[mod]] = {files[t] for t in tgt}
    return g

def sccs(g):
    index, low, st, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = len(index); st.append(v); on.add(v)
        for w in g.get(v, ()):
            if w not in index: visit(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = st.pop(); on.discard(w); c.append(w)
                if w == v: break
            if len(c) > 1: out.append(sorted(c))
    for v in sorted(g):
        if v not in index: visit(v)
    return out

if __name__ == '__main__':
    src = sys.argv[1]
    args = sys.argv[2:]
    allow = [args[i+1] for i, a in enumerate(args) if a == '--allow-cycle-within']
    # --allow-cycle A,B,...: exactly this cycle (the same files, no more) is allowed.
    exact = [sorted(args[i+1].split(',')) for i, a in enumerate(args) if a == '--allow-cycle']
    g = graph(src)
    bad = [c for c in sccs(g) if not any(all(f.startswith(a) for f in c) for a in allow)
           and c not in exact]
    for c in sccs(g):
        if c not in bad: print('allowed cycle:', ' '.join(c))
    for c in bad: print('cycle:', ' '.join(c))
    if '--into' in args:
        into = args[args.index('--into') + 1]
        writers = [args[i+1] for i, a in enumerate(args) if a == '--writer']
        ups = sorted(f'{f} -> {t}' for f, ts in g.items() for t in ts
                     if t.startswith(into) and not f.startswith(into) and not any(f.startswith(w) for w in writers))
        for u in ups: print('into', into + ':', u)
        print(f'{len(bad)} cycles, {len(ups)} imports of {into} from outside its writers')
        sys.exit(1 if bad or ups else 0)
    print(f'{len(bad)} cycles'); sys.exit(1 if bad else 0)
