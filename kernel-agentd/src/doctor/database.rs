//! The doctor's database checks (offline, read-only): integrity and migration level, the
//! outbox backlog and its oldest undelivered item, schedules' next runs.

use std::time::Duration;

use chrono::{DateTime, Utc};
use kernel_common::Config;
use sqlx::Connection as _;
use sqlx::sqlite::SqliteConnection;

use super::Check;
use super::texts::Texts;
use crate::store::schema;

/// An undelivered outbox item older than this means delivery is stuck.
pub const STALE_OUTBOX: Duration = Duration::from_secs(60 * 60);

/// The database, outbox and schedule checks (one warning when there is no database yet).
pub async fn checks(config: &Config, t: &Texts) -> Vec<Check> {
    let name = t.pick("数据库", "database");
    let db = config.general.data_dir.join(crate::backup::DB_FILE);
    if !db.is_file() {
        return vec![Check::warn(
            name,
            t.pick(
                format!("{} 尚不存在", db.display()),
                format!("{} does not exist yet", db.display()),
            ),
            t.pick("启动一次 kernel-agentd", "start kernel-agentd once"),
        )];
    }
    let mut conn = match schema::read_only(&db).await {
        Ok(conn) => conn,
        Err(e) => {
            return vec![Check::fail(
                name,
                e.to_string(),
                t.pick(
                    "检查数据目录的所有者和权限",
                    "check the data_dir's owner and permissions",
                ),
            )];
        }
    };
    let mut out = vec![db_level(&mut conn, &name, t).await];
    out.push(outbox(&mut conn, t).await);
    out.push(schedules(&mut conn, config, t).await);
    conn.close().await.ok();
    out
}

async fn db_level(conn: &mut SqliteConnection, name: &str, t: &Texts) -> Check {
    let restore = t.pick(
        "用 kernel-agentd restore <备份目录> 恢复最近的备份",
        "restore the latest backup: kernel-agentd restore <backup dir>",
    );
    let check: Vec<String> = match sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_all(&mut *conn)
        .await
    {
        Ok(rows) => rows,
        Err(e) => return Check::fail(name, format!("integrity_check: {e}"), restore),
    };
    if check != ["ok"] {
        return Check::fail(
            name,
            format!("integrity_check: {}", check.join("; ")),
            restore,
        );
    }
    let level = match schema::level(conn).await {
        Ok(level) => level,
        Err(e) => return Check::fail(name, e.to_string(), restore),
    };
    let known = schema::known_version();
    if !level.unknown.is_empty() {
        return Check::fail(
            name,
            t.pick(
                format!(
                    "架构版本 {}，比本程序（{known}）新",
                    level.unknown.iter().max().unwrap_or(&0)
                ),
                format!(
                    "schema version {}, newer than this binary ({known})",
                    level.unknown.iter().max().unwrap_or(&0)
                ),
            ),
            t.pick(
                "运行更新的 kernel-agentd，或恢复本版本做的备份",
                "run the newer kernel-agentd, or restore a backup made by this version",
            ),
        );
    }
    if !level.pending.is_empty() {
        return Check::warn(
            name,
            t.pick(
                format!(
                    "integrity_check ok；架构版本 {}，{} 个迁移待执行",
                    level.version(),
                    level.pending.len()
                ),
                format!(
                    "integrity_check ok; schema version {}, {} migrations pending",
                    level.version(),
                    level.pending.len()
                ),
            ),
            t.pick(
                "启动 kernel-agentd 即执行（执行前自动备份）",
                "start kernel-agentd to apply them (it backs up first)",
            ),
        );
    }
    Check::ok(
        name,
        t.pick(
            format!("integrity_check ok；架构版本 {}（最新）", level.version()),
            format!(
                "integrity_check ok; schema version {} (current)",
                level.version()
            ),
        ),
    )
}

async fn outbox(conn: &mut SqliteConnection, t: &Texts) -> Check {
    let name = t.pick("待发送消息", "outbox");
    let row: Result<(i64, Option<i64>), _> =
        sqlx::query_as("SELECT COUNT(*), MIN(created_at) FROM outbox WHERE acked_at IS NULL")
            .fetch_one(&mut *conn)
            .await;
    let (count, oldest) = match row {
        Ok(row) => row,
        Err(e) => {
            return Check::fail(
                name,
                e.to_string(),
                t.pick("检查数据库", "check the database"),
            );
        }
    };
    let Some(oldest) = oldest.and_then(DateTime::<Utc>::from_timestamp_millis) else {
        return Check::ok(name, t.pick("无积压", "nothing waiting"));
    };
    let age = Utc::now()
        .signed_duration_since(oldest)
        .to_std()
        .unwrap_or_default();
    let mins = age.as_secs() / 60;
    if age > STALE_OUTBOX {
        return Check::fail(
            name,
            t.pick(
                format!("{count} 条未送达，最早一条已等 {mins} 分钟"),
                format!("{count} undelivered, the oldest waiting {mins} min"),
            ),
            t.pick(
                "kernel-tg 没有在投递：确认它在运行（systemctl status kernel-tg）并查看其日志；Telegram 是否可达",
                "kernel-tg is not delivering: check that it runs (systemctl status kernel-tg) and its log, and that Telegram is reachable",
            ),
        );
    }
    Check::ok(
        name,
        t.pick(
            format!("{count} 条正在投递（最早 {mins} 分钟前）"),
            format!("{count} being delivered (oldest {mins} min ago)"),
        ),
    )
}

async fn schedules(conn: &mut SqliteConnection, config: &Config, t: &Texts) -> Check {
    let name = t.pick("定时任务", "schedules");
    let rows: Vec<(String, i64)> =
        match sqlx::query_as("SELECT spec, next_fire FROM schedules ORDER BY next_fire LIMIT 3")
            .fetch_all(&mut *conn)
            .await
        {
            Ok(rows) => rows,
            Err(e) => {
                return Check::fail(
                    name,
                    e.to_string(),
                    t.pick("检查数据库", "check the database"),
                );
            }
        };
    if rows.is_empty() {
        return Check::ok(name, t.pick("没有", "none"));
    }
    let tz = config.general.timezone;
    let next: Vec<String> = rows
        .iter()
        .filter_map(|(spec, at)| {
            let at = DateTime::<Utc>::from_timestamp_millis(*at)?;
            Some(format!(
                "{spec} → {}",
                at.with_timezone(&tz).format("%Y-%m-%d %H:%M")
            ))
        })
        .collect();
    let overdue = rows
        .first()
        .and_then(|(_, at)| DateTime::<Utc>::from_timestamp_millis(*at))
        .is_some_and(|at| Utc::now().signed_duration_since(at) > chrono::Duration::hours(1));
    let detail = t.pick(
        format!("下次：{}", next.join("; ")),
        format!("next: {}", next.join("; ")),
    );
    if overdue {
        return Check::warn(
            name,
            detail,
            t.pick(
                "有任务已逾期：kernel-agentd 运行时会补跑",
                "one is overdue: it runs once kernel-agentd is up",
            ),
        );
    }
    Check::ok(name, detail)
}
