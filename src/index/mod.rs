//! Index transforms (pure).
