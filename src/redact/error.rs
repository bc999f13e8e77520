//! What can go wrong when extra redaction patterns come from configuration.

/// A configured redaction pattern that cannot be used. Each variant names the pattern.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RedactError {
    /// The pattern's regex does not compile.
    #[error("redaction pattern `{name}` is not a valid regex: {reason}")]
    InvalidRegex { name: String, reason: String },
    /// The placeholder name is empty or has characters other than ASCII letters, digits, `-`, `_`.
    #[error(
        "redaction pattern name `{name}` is not usable as a placeholder: use ASCII letters, digits, `-` or `_`"
    )]
    InvalidName { name: String },
    /// A pattern matches a placeholder (its own or another's), so redacted text would be
    /// redacted again and the output would not be stable.
    #[error(
        "redaction pattern `{name}` matches the placeholder `{placeholder}`, so redacting twice would change the text"
    )]
    MatchesPlaceholder { name: String, placeholder: String },
}
