//! The exit codes the commands share (`docs/cli-and-outputs.md`, "Exit
//! codes"): 0 when a command did its job and 1 when its answer is "no"
//! (a verdict that does not match `expect`, a regression) are each
//! command's own; these two mean the same for every command.

/// Bad input (an invalid scenario, matrix file or flag, an unusable
/// `--out`): one message on stderr naming the file, key and line, nothing
/// written.
pub(crate) const BAD_INPUT: u8 = 2;

/// The program itself failed: a bug (a panic, a broken invariant), or an
/// output it could not write. Never for bad input.
pub(crate) const SOFTWARE: u8 = 70;
