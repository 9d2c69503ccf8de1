//! `StoreError`: what a store operation tells its caller, without SQL text in its message.

use std::borrow::Cow;

use sqlx::migrate::MigrateError;

/// A failed store operation. `Display` names the operation and a coarse cause only; the sqlx
/// error behind a `Database` failure is kept as the `source` for logs.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The session or message does not exist.
    #[error("not found")]
    NotFound,
    /// A stored row cannot be decoded (bad JSON, unknown role, bad timestamp).
    #[error("corrupt data: {0}")]
    Corrupt(String),
    /// The database failed; the message says which operation and why, coarsely.
    #[error("database error: {0}")]
    Database(String, #[source] sqlx::Error),
}

impl StoreError {
    /// The message without its kind ("which operation: why", or what is corrupt), for a text
    /// that names the kind in the owner's language.
    pub fn detail(&self) -> String {
        match self {
            StoreError::NotFound => "not found".to_owned(),
            StoreError::Corrupt(what) => what.clone(),
            StoreError::Database(what, _) => what.clone(),
        }
    }

    /// Wraps a sqlx error from the operation `op` (a short phrase such as "append messages").
    pub(crate) fn db(op: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
        move |e| StoreError::Database(format!("{op}: {}", describe(&e)), e)
    }

    /// Wraps a migration failure.
    pub(crate) fn migrate(e: MigrateError) -> StoreError {
        let why: Cow<'static, str> = match &e {
            MigrateError::VersionMissing(v) => {
                format!("the database has schema version {v}, written by a newer Kernel").into()
            }
            MigrateError::VersionMismatch(v) => {
                format!("migration {v} changed after it was applied").into()
            }
            MigrateError::Dirty(v) => format!("migration {v} is partially applied").into(),
            MigrateError::Execute(inner) | MigrateError::ExecuteMigration(inner, _) => {
                describe(inner).into()
            }
            _ => "cannot apply the schema migrations".into(),
        };
        StoreError::Database(format!("migrate: {why}"), sqlx::Error::Migrate(Box::new(e)))
    }

    /// Wraps a file-system failure while preparing the database file.
    pub(crate) fn io(op: &'static str, e: std::io::Error) -> StoreError {
        StoreError::Database(format!("{op}: {e}"), sqlx::Error::Io(e))
    }
}

/// A coarse, SQL-free description of a sqlx error.
fn describe(e: &sqlx::Error) -> &'static str {
    match e {
        sqlx::Error::Database(db) => describe_sqlite(db.code().as_deref(), db.kind()),
        sqlx::Error::Io(_) => "I/O error",
        sqlx::Error::PoolTimedOut => "timed out waiting for a connection",
        sqlx::Error::PoolClosed => "the database is closed",
        sqlx::Error::RowNotFound => "row not found",
        sqlx::Error::ColumnDecode { .. } | sqlx::Error::Decode(_) => "cannot decode a column",
        sqlx::Error::Migrate(_) => "migration failed",
        _ => "internal database error",
    }
}

/// Classifies a SQLite error by its (extended) result code.
fn describe_sqlite(code: Option<&str>, kind: sqlx::error::ErrorKind) -> &'static str {
    use sqlx::error::ErrorKind;
    match kind {
        ErrorKind::UniqueViolation => return "unique constraint violated",
        ErrorKind::ForeignKeyViolation => return "foreign key constraint violated",
        ErrorKind::NotNullViolation => return "not-null constraint violated",
        ErrorKind::CheckViolation => return "check constraint violated",
        _ => {}
    }
    let primary = code.and_then(|c| c.parse::<i32>().ok()).map(|c| c & 0xff);
    match primary {
        Some(5 | 6) => "the database is locked",
        Some(8) => "the database is read-only",
        Some(10) => "disk I/O error",
        Some(11 | 26) => "the database file is damaged or not a database",
        Some(13) => "the disk is full",
        Some(14) => "cannot open the database file",
        Some(1) => "statement failed",
        _ => "SQLite error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_operation_and_a_coarse_cause() {
        let e = StoreError::db("list sessions")(sqlx::Error::PoolClosed);
        assert_eq!(
            e.to_string(),
            "database error: list sessions: the database is closed"
        );
        assert!(std::error::Error::source(&e).is_some());
    }

    #[test]
    fn sqlite_codes_are_classified() {
        use sqlx::error::ErrorKind;
        assert_eq!(
            describe_sqlite(Some("517"), ErrorKind::Other),
            "the database is locked"
        );
        assert_eq!(
            describe_sqlite(Some("1"), ErrorKind::Other),
            "statement failed"
        );
        assert_eq!(
            describe_sqlite(None, ErrorKind::UniqueViolation),
            "unique constraint violated"
        );
    }

    #[test]
    fn newer_schema_is_explained() {
        let e = StoreError::migrate(MigrateError::VersionMissing(7));
        assert_eq!(
            e.to_string(),
            "database error: migrate: the database has schema version 7, written by a newer Kernel"
        );
    }
}
