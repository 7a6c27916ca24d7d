//! Why a lab run could not be made or judged.

#[derive(Debug)]
pub enum LabError {
    /// The scenario, the client command or a fault the lab refuses (exit 2).
    BadInput(String),
    /// The lab itself failed (a port, a file, a runtime): exit 70.
    Failed(String),
}

impl std::fmt::Display for LabError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LabError::BadInput(m) | LabError::Failed(m) => f.write_str(m),
        }
    }
}
