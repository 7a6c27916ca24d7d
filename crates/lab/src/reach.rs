//! Whether libfaketime reaches a client's clock. The lab sets a client's
//! clock by preloading libfaketime ([`super::faketime`]), which replaces the
//! libc functions that read time and sleep. That acts on a program only if
//! the dynamic loader put the library in its process and the program reads
//! time through libc. Neither holds for every runtime:
//! - a static binary ignores `LD_PRELOAD`: the library is not mapped;
//! - a Go program reads the clock from the kernel's vDSO itself, with or
//!   without cgo, so the library may be mapped and still change nothing.
//!
//! A run whose client clock cannot be set is refused (exit 2), never run as
//! if the clock had moved: before the run when the command's own program
//! is a Go binary ([`go_program`]), and during it, for a program a wrapper
//! starts, when the client is first heard from ([`unreachable_in_group`]).
//! Python, Node, Rust programs and the JVM read time through libc: the
//! library is mapped in them and acts.

use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The ELF section every Go binary since Go 1.13 carries (the build
/// information `go version FILE` reads).
const GO_SECTION: &[u8] = b".go.buildinfo";

/// Whether `path` is an ELF program built by Go: it has a `.go.buildinfo`
/// section. Not an ELF file, or not readable: `false`.
pub fn go_program(path: &Path) -> bool {
    section_names(path).is_ok_and(|names| names.iter().any(|n| n == GO_SECTION))
}

/// The names of an ELF64 little-endian file's sections.
fn section_names(path: &Path) -> io::Result<Vec<Vec<u8>>> {
    let mut f = fs::File::open(path)?;
    let mut header = [0u8; 64];
    f.read_exact(&mut header)?;
    // \x7fELF, 64-bit, little-endian.
    if header[..4] != *b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return Ok(Vec::new());
    }
    let u16_at = |b: &[u8], o: usize| u16::from_le_bytes([b[o], b[o + 1]]) as u64;
    let u32_at = |b: &[u8], o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap()) as u64;
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let (shoff, shentsize) = (u64_at(&header, 0x28), u16_at(&header, 0x3A));
    let (shnum, shstrndx) = (u16_at(&header, 0x3C), u16_at(&header, 0x3E));
    if shoff == 0 || shentsize < 64 || shstrndx >= shnum {
        return Ok(Vec::new());
    }
    let mut table = vec![0u8; (shentsize * shnum) as usize];
    f.seek(SeekFrom::Start(shoff))?;
    f.read_exact(&mut table)?;
    let entry = |i: u64| &table[(i * shentsize) as usize..((i + 1) * shentsize) as usize];
    let strings = entry(shstrndx);
    let (str_off, str_size) = (u64_at(strings, 0x18), u64_at(strings, 0x20));
    let mut names = vec![0u8; str_size.min(1 << 20) as usize];
    f.seek(SeekFrom::Start(str_off))?;
    f.read_exact(&mut names)?;
    Ok((0..shnum)
        .filter_map(|i| {
            let start = u32_at(entry(i), 0) as usize;
            let rest = names.get(start..)?;
            let end = rest.iter().position(|&b| b == 0)?;
            Some(rest[..end].to_vec())
        })
        .collect())
}

/// `cmd`'s program as the lab would start it: a path, or found on `PATH`.
pub fn program(cmd: &[String]) -> Option<PathBuf> {
    let program = cmd.first()?;
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Why libfaketime (`lib`) cannot set the clock of a process in the
/// group `pgid`, if it cannot: the first such process, in pid order.
/// Processes that ended while being looked at are passed over.
pub(crate) fn unreachable_in_group(pgid: i32, lib: &Path) -> Option<String> {
    assert!(pgid > 0, "the processes of group {pgid}");
    let lib_name = lib.file_name()?.to_string_lossy().into_owned();
    group(pgid).into_iter().find_map(|pid| {
        let exe = fs::read_link(format!("/proc/{pid}/exe")).ok()?;
        let maps = fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
        let shown = exe.display();
        if go_program(&exe) {
            return Some(format!(
                "its process {pid} runs {shown}, a Go program: Go reads the clock from the \
                 kernel itself (the vDSO), not through libc, so libfaketime cannot move it"
            ));
        }
        (!maps.contains(&lib_name)).then(|| {
            format!(
                "libfaketime ({lib_name}) is not mapped in its process {pid} ({shown}): the \
                 program did not load it (a static binary ignores LD_PRELOAD), so its clock \
                 is the machine's"
            )
        })
    })
}

/// The pids of the process group `pgid`, in order.
fn group(pgid: i32) -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<i32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .filter(|pid| process_group(*pid) == Some(pgid))
        .collect();
    pids.sort_unstable();
    pids
}

/// The process group of `pid`, from `/proc/<pid>/stat` (the fifth field,
/// counted after the command name's closing parenthesis).
fn process_group(pid: i32) -> Option<i32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(2)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_itself_is_no_go_program_and_a_text_file_is_none() {
        let me = std::env::current_exe().unwrap();
        assert!(
            !section_names(&me).unwrap().is_empty(),
            "{me:?} has sections"
        );
        assert!(!go_program(&me));
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        assert!(!go_program(&manifest));
        assert!(!go_program(Path::new("/nonexistent/program")));
    }

    /// `program` started in a group of its own, its stdin held open so
    /// that it waits, with or without libfaketime preloaded.
    fn waiting(program: &Path, preload: Option<&Path>) -> std::process::Child {
        use std::os::unix::process::CommandExt;
        let mut cmd = std::process::Command::new(program);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .process_group(0);
        if let Some(lib) = preload {
            cmd.env("LD_PRELOAD", lib).env("FAKETIME", "+0");
        }
        let child = cmd.spawn().expect("start it");
        // The loader has mapped what it maps once the program reads stdin.
        std::thread::sleep(std::time::Duration::from_millis(300));
        child
    }

    fn lib() -> PathBuf {
        crate::faketime::library()
            .expect("libfaketime: apt-get install faketime (scripts/test.sh installs it)")
    }

    /// What [`unreachable_in_group`] says of `program`, started waiting in
    /// a group of its own, with or without libfaketime preloaded.
    fn looked_at(program: &Path, preload: bool) -> Option<String> {
        let lib = lib();
        let mut c = waiting(program, preload.then_some(lib.as_path()));
        let why = unreachable_in_group(c.id() as i32, &lib);
        // End of input: it exits by itself, and libfaketime, preloaded,
        // removes the shared memory it made (a SIGKILL would leave it in
        // /dev/shm).
        drop(c.stdin.take());
        c.wait().unwrap();
        why
    }

    #[test]
    fn a_c_program_with_libfaketime_preloaded_is_reached() {
        let cat = program(&["cat".into()]).expect("cat on PATH");
        assert_eq!(looked_at(&cat, true), None);
    }

    #[test]
    fn a_program_without_the_library_mapped_is_not_reached() {
        let cat = program(&["cat".into()]).expect("cat on PATH");
        let why = looked_at(&cat, false).expect("cat without LD_PRELOAD is not reached");
        assert!(why.contains("is not mapped in its process"), "{why}");
    }

    #[test]
    fn a_go_program_is_not_reached_even_with_the_library_preloaded() {
        let gofmt = program(&["gofmt".into()])
            .expect("gofmt, Go's formatter, on PATH: install Go (https://go.dev/dl/)");
        assert!(go_program(&gofmt), "{gofmt:?} is a Go program");
        let why = looked_at(&gofmt, true).expect("a Go program is not reached");
        assert!(why.contains("a Go program"), "{why}");
    }

    #[test]
    fn a_process_group_is_found_with_its_leader() {
        let me = std::process::id() as i32;
        let pgid = process_group(me).expect("our own stat");
        assert!(group(pgid).contains(&me));
    }
}
