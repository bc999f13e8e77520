//! The storage engines Strata could sit on, measured side by side: LMDB as Strata used it
//! before checksums (raw), LMDB with Strata's guards (every value sealed with a checksum of its
//! key and bytes, keys checked in order, counts against the header), redb (page checksums,
//! no map) and SQLite (WAL). For each: the million-episode target (write rate, bytes per
//! record, point-read latency, full scan), the multi-process target (a reader in another
//! process while a write is open; a second writing process), and the corruption campaign
//! (truncations, garbage pages and 16-byte flips, each followed by a full verified scan in a
//! child process: a signal, a hang, an error, a wrong answer, or no effect).
//!
//! `store-engines all [--records N] [--campaign-records N] [--flips N] [--pages N]` prints
//! one JSON object. Not part of Strata's build or CI.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redb::{ReadableDatabase, ReadableTable};
use serde_json::{Value, json};

const VALUE_BYTES: usize = 1_310;
const BATCH: usize = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    Lmdb,
    LmdbSealed,
    Redb,
    Sqlite,
}

impl Engine {
    const ALL: [Engine; 4] = [Engine::Lmdb, Engine::LmdbSealed, Engine::Redb, Engine::Sqlite];

    fn name(self) -> &'static str {
        match self {
            Engine::Lmdb => "lmdb",
            Engine::LmdbSealed => "lmdb-sealed",
            Engine::Redb => "redb",
            Engine::Sqlite => "sqlite",
        }
    }

    fn parse(s: &str) -> Engine {
        Engine::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .unwrap_or_else(|| panic!("unknown engine {s}"))
    }

    /// The file the corruption campaign damages.
    fn file(self, dir: &Path) -> PathBuf {
        match self {
            Engine::Lmdb | Engine::LmdbSealed => dir.join("data.mdb"),
            Engine::Redb => dir.join("db.redb"),
            Engine::Sqlite => dir.join("db.sqlite"),
        }
    }
}

fn key(i: usize) -> String {
    format!("EP-{i:08}")
}

/// Record `i`'s bytes, the same on every run: what a scan checks a value against.
fn value(i: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(i as u64 ^ 0x5eed);
    let mut v = vec![0u8; VALUE_BYTES];
    rng.fill(&mut v);
    v
}

fn seal(k: &[u8], v: &[u8]) -> Vec<u8> {
    let sum = xxhash_rust::xxh3::xxh3_64_with_seed(v, xxhash_rust::xxh3::xxh3_64(k)) as u32;
    let mut out = v.to_vec();
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

fn unseal<'a>(k: &[u8], stored: &'a [u8]) -> Result<&'a [u8], String> {
    let at = stored.len().checked_sub(4).ok_or("a value shorter than its checksum")?;
    let (v, sum) = stored.split_at(at);
    let want = xxhash_rust::xxh3::xxh3_64_with_seed(v, xxhash_rust::xxh3::xxh3_64(k)) as u32;
    if sum == want.to_le_bytes() {
        Ok(v)
    } else {
        Err(format!("checksum mismatch at {}", String::from_utf8_lossy(k)))
    }
}

type Lmdb = heed::Database<'static, heed::types::Bytes, heed::types::Bytes>;

fn lmdb_env(dir: &Path) -> heed::Env {
    std::fs::create_dir_all(dir).unwrap();
    // SAFETY: one environment per directory in this process.
    unsafe {
        heed::EnvOpenOptions::new()
            .map_size(1 << 40)
            .max_dbs(4)
            .open(dir)
            .unwrap()
    }
}

/// The table, created by a transaction of its own if it is not there yet.
fn lmdb_table(env: &heed::Env) -> Lmdb {
    let txn = env.write_txn().unwrap();
    env.create_databases_and_commit(txn, |dbo, txn| -> Result<_, heed::Error> {
        Ok(heed::CommitOrAbort::<_, ()>::Commit(
            dbo.create_database(txn, Some("kv"))?,
        ))
    })
    .unwrap()
    .commit()
    .unwrap()
}

/// The table of an environment written before.
fn lmdb_existing(env: &heed::Env) -> Result<Lmdb, String> {
    let txn = env.read_txn().map_err(|e| e.to_string())?;
    env.open_databases_and_commit(txn, |dbo, txn| -> Result<_, heed::Error> {
        Ok(heed::CommitOrAbort::<_, ()>::Commit(
            dbo.open_database(txn, Some("kv"))?,
        ))
    })
    .map_err(|e| e.to_string())?
    .commit()
    .flatten()
    .ok_or_else(|| "no table".to_string())
}

const REDB: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("kv");

fn redb_db(dir: &Path) -> Result<redb::Database, String> {
    std::fs::create_dir_all(dir).unwrap();
    redb::Builder::new()
        .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
        .create(Engine::Redb.file(dir))
        .map_err(|e| e.to_string())
}

fn sqlite_db(dir: &Path) -> Result<rusqlite::Connection, String> {
    std::fs::create_dir_all(dir).unwrap();
    let c = rusqlite::Connection::open(Engine::Sqlite.file(dir)).map_err(|e| e.to_string())?;
    c.pragma_update(None, "journal_mode", "wal")
        .map_err(|e| e.to_string())?;
    c.busy_timeout(Duration::from_secs(5))
        .map_err(|e| e.to_string())?;
    c.execute(
        // A rowid table: WITHOUT ROWID keeps each 1.3 KB value in the key's B-tree, where
        // SQLite's documentation says rows over a twentieth of a page do not belong.
        "CREATE TABLE IF NOT EXISTS kv (k TEXT PRIMARY KEY, v BLOB NOT NULL)",
        [],
    )
    .map_err(|e| e.to_string())?;
    Ok(c)
}

/// Writes records `0..n` in transactions of [`BATCH`].
fn write(engine: Engine, dir: &Path, n: usize) {
    let mut i = 0;
    match engine {
        Engine::Lmdb | Engine::LmdbSealed => {
            let env = lmdb_env(dir);
            let db = lmdb_table(&env);
            while i < n {
                let mut txn = env.write_txn().unwrap();
                for j in i..(i + BATCH).min(n) {
                    let k = key(j);
                    let v = value(j);
                    let v = if engine == Engine::LmdbSealed {
                        seal(k.as_bytes(), &v)
                    } else {
                        v
                    };
                    db.put(&mut txn, k.as_bytes(), &v).unwrap();
                }
                txn.commit().unwrap();
                i += BATCH;
            }
        }
        Engine::Redb => {
            let db = redb_db(dir).unwrap();
            while i < n {
                let txn = db.begin_write().unwrap();
                {
                    let mut t = txn.open_table(REDB).unwrap();
                    for j in i..(i + BATCH).min(n) {
                        t.insert(key(j).as_str(), value(j).as_slice()).unwrap();
                    }
                }
                txn.commit().unwrap();
                i += BATCH;
            }
        }
        Engine::Sqlite => {
            let mut c = sqlite_db(dir).unwrap();
            while i < n {
                let txn = c.transaction().unwrap();
                {
                    let mut put = txn
                        .prepare_cached("INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)")
                        .unwrap();
                    for j in i..(i + BATCH).min(n) {
                        put.execute(rusqlite::params![key(j), value(j)]).unwrap();
                    }
                }
                txn.commit().unwrap();
                i += BATCH;
            }
        }
    }
}

/// Reads `keys` one by one; each read's time in microseconds.
fn point_reads(engine: Engine, dir: &Path, keys: &[usize]) -> Vec<f64> {
    let mut times = Vec::with_capacity(keys.len());
    let mut time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64() * 1e6);
    };
    match engine {
        Engine::Lmdb | Engine::LmdbSealed => {
            let env = lmdb_env(dir);
            let db = lmdb_existing(&env).unwrap();
            let txn = env.read_txn().unwrap();
            for &i in keys {
                let k = key(i);
                time(&mut || {
                    let v = db.get(&txn, k.as_bytes()).unwrap().unwrap();
                    if engine == Engine::LmdbSealed {
                        unseal(k.as_bytes(), v).unwrap();
                    }
                    std::hint::black_box(v);
                });
            }
        }
        Engine::Redb => {
            let db = redb_db(dir).unwrap();
            let txn = db.begin_read().unwrap();
            let t = txn.open_table(REDB).unwrap();
            for &i in keys {
                let k = key(i);
                time(&mut || {
                    std::hint::black_box(t.get(k.as_str()).unwrap().unwrap().value().len());
                });
            }
        }
        Engine::Sqlite => {
            let c = sqlite_db(dir).unwrap();
            let mut get = c.prepare("SELECT v FROM kv WHERE k = ?1").unwrap();
            for &i in keys {
                let k = key(i);
                time(&mut || {
                    let v: Vec<u8> = get.query_row([&k], |r| r.get(0)).unwrap();
                    std::hint::black_box(v);
                });
            }
        }
    }
    times
}

/// Reads every record in key order and checks it is exactly records `0..n`: `Ok(())`, an
/// error the engine (or the seal) reported, or a wrong answer (`Err` starting `WRONG`).
fn scan(engine: Engine, dir: &Path, n: usize) -> Result<(), String> {
    let mut expected = 0usize;
    let mut check = |k: &[u8], v: &[u8]| -> Result<(), String> {
        if expected >= n || k != key(expected).as_bytes() || v != value(expected) {
            return Err(format!("WRONG: record {expected} read as {}", String::from_utf8_lossy(k)));
        }
        expected += 1;
        Ok(())
    };
    match engine {
        Engine::Lmdb | Engine::LmdbSealed => {
            let env = std::panic::catch_unwind(|| lmdb_env(dir)).map_err(|_| "open panicked".to_string())?;
            let db = lmdb_existing(&env)?;
            let txn = env.read_txn().map_err(|e| e.to_string())?;
            let header = db.len(&txn).map_err(|e| e.to_string())?;
            let mut previous: Option<Vec<u8>> = None;
            for row in db.iter(&txn).map_err(|e| e.to_string())? {
                let (k, v) = row.map_err(|e| e.to_string())?;
                if engine == Engine::LmdbSealed {
                    let v = unseal(k, v)?;
                    if previous.as_deref().is_some_and(|p| p >= k) {
                        return Err("keys out of order".into());
                    }
                    previous = Some(k.to_vec());
                    check(k, v)?;
                } else {
                    check(k, v)?;
                }
            }
            if engine == Engine::LmdbSealed && header != expected as u64 {
                return Err("row count differs from the header".into());
            }
        }
        Engine::Redb => {
            let db = redb::Builder::new()
                .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
                .open(Engine::Redb.file(dir))
                .map_err(|e| e.to_string())?;
            let txn = db.begin_read().map_err(|e| e.to_string())?;
            let t = txn.open_table(REDB).map_err(|e| e.to_string())?;
            for row in t.iter().map_err(|e| e.to_string())? {
                let (k, v) = row.map_err(|e| e.to_string())?;
                check(k.value().as_bytes(), v.value())?;
            }
        }
        Engine::Sqlite => {
            let c = rusqlite::Connection::open_with_flags(
                Engine::Sqlite.file(dir),
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .map_err(|e| e.to_string())?;
            let mut q = c
                .prepare("SELECT k, v FROM kv ORDER BY k")
                .map_err(|e| e.to_string())?;
            let mut rows = q.query([]).map_err(|e| e.to_string())?;
            while let Some(r) = rows.next().map_err(|e| e.to_string())? {
                let k: String = r.get(0).map_err(|e| e.to_string())?;
                let v: Vec<u8> = r.get(1).map_err(|e| e.to_string())?;
                check(k.as_bytes(), &v)?;
            }
        }
    }
    if expected != n {
        return Err(format!("WRONG: {expected} of {n} records read, no error"));
    }
    Ok(())
}

fn du(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Runs this program again as `args`, at most `bound`: its exit, stdout, and whether it hung.
fn child(args: &[&str], bound: Duration) -> (std::process::ExitStatus, String, bool) {
    let mut c = Command::new(std::env::current_exe().unwrap())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if let Some(status) = c.try_wait().unwrap() {
            let mut out = String::new();
            std::io::Read::read_to_string(&mut c.stdout.take().unwrap(), &mut out).ok();
            return (status, out, false);
        }
        if started.elapsed() > bound {
            let _ = c.kill();
            let status = c.wait().unwrap();
            return (status, String::new(), true);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The million-record target: write rate, size, point reads, full scan.
fn scale(engine: Engine, root: &Path, n: usize) -> Value {
    let dir = root.join(format!("scale-{}", engine.name()));
    let t = Instant::now();
    write(engine, &dir, n);
    let write_s = t.elapsed().as_secs_f64();
    if engine == Engine::Sqlite {
        // What stays on disk: the write-ahead log folded into the database.
        let c = sqlite_db(&dir).unwrap();
        c.pragma_update(None, "wal_checkpoint", "TRUNCATE").unwrap();
    }
    let mut rng = fastrand::Rng::with_seed(7);
    let keys: Vec<usize> = (0..100_000).map(|_| rng.usize(0..n)).collect();
    let mut times = point_reads(engine, &dir, &keys);
    times.sort_by(f64::total_cmp);
    let t = Instant::now();
    let scanned = scan(engine, &dir, n);
    let scan_s = t.elapsed().as_secs_f64();
    let bytes = du(&dir);
    std::fs::remove_dir_all(&dir).ok();
    json!({
        "records": n,
        "write_records_per_s": (n as f64 / write_s).round(),
        "bytes_per_record": bytes / n as u64,
        "point_read_p50_us": (percentile(&times, 0.5) * 10.0).round() / 10.0,
        "point_read_p99_us": (percentile(&times, 0.99) * 10.0).round() / 10.0,
        "full_scan_s": (scan_s * 100.0).round() / 100.0,
        "scan": scanned.err().unwrap_or_else(|| "ok".into()),
    })
}

/// The multi-process target: while this process holds a write transaction open, another
/// process reads (it must see the last commit, without waiting); and a second process writes
/// once this one's transaction is done, with this one still open.
fn processes(engine: Engine, root: &Path) -> Value {
    let dir = root.join(format!("procs-{}", engine.name()));
    write(engine, &dir, 1_000);
    let d = dir.to_str().unwrap();
    let reader = |label: &str| {
        let (status, out, hung) = child(&["probe-read", engine.name(), d], Duration::from_secs(10));
        let said = out.trim().to_string();
        if hung {
            format!("{label}: blocked")
        } else if status.success() {
            format!("{label}: {said}")
        } else {
            format!("{label}: refused ({said})")
        }
    };
    let writer = |label: &str| {
        let (status, out, hung) = child(&["probe-write", engine.name(), d], Duration::from_secs(10));
        if hung {
            format!("{label}: blocked")
        } else if status.success() {
            format!("{label}: wrote")
        } else {
            format!("{label}: refused ({})", out.trim())
        }
    };
    let (during_write, second_writer) = match engine {
        Engine::Lmdb | Engine::LmdbSealed => {
            let env = lmdb_env(&dir);
            let db = lmdb_table(&env);
            let mut txn = env.write_txn().unwrap();
            db.put(&mut txn, b"EP-99999999", b"x").unwrap();
            let r = reader("reader during a write");
            txn.abort();
            (r, writer("second writer"))
        }
        Engine::Redb => {
            let db = redb_db(&dir).unwrap();
            let txn = db.begin_write().unwrap();
            {
                let mut t = txn.open_table(REDB).unwrap();
                t.insert("EP-99999999", b"x".as_slice()).unwrap();
            }
            let r = reader("reader during a write");
            txn.abort().unwrap();
            (r, writer("second writer"))
        }
        Engine::Sqlite => {
            let mut c = sqlite_db(&dir).unwrap();
            let txn = c
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .unwrap();
            txn.execute("INSERT INTO kv VALUES ('EP-99999999', x'00')", [])
                .unwrap();
            let r = reader("reader during a write");
            txn.rollback().unwrap();
            (r, writer("second writer"))
        }
    };
    std::fs::remove_dir_all(&dir).ok();
    json!({ "reader_during_write": during_write, "second_writer": second_writer })
}

fn probe_read(engine: Engine, dir: &Path) -> Result<usize, String> {
    let n = match engine {
        Engine::Lmdb | Engine::LmdbSealed => {
            let env = lmdb_env(dir);
            let db = lmdb_existing(&env)?;
            let txn = env.read_txn().map_err(|e| e.to_string())?;
            db.len(&txn).map_err(|e| e.to_string())? as usize
        }
        Engine::Redb => {
            let db = redb::Builder::new()
                .set_concurrency_mode(redb::ConcurrencyMode::MultiWriter)
                .open_read_only(Engine::Redb.file(dir))
                .map_err(|e| e.to_string())?;
            let txn = db.begin_read().map_err(|e| e.to_string())?;
            let t = txn.open_table(REDB).map_err(|e| e.to_string())?;
            redb::ReadableTableMetadata::len(&t).map_err(|e| e.to_string())? as usize
        }
        Engine::Sqlite => {
            let c = sqlite_db(dir)?;
            c.query_row("SELECT count(*) FROM kv", [], |r| r.get::<_, i64>(0))
                .map_err(|e| e.to_string())? as usize
        }
    };
    Ok(n)
}

fn probe_write(engine: Engine, dir: &Path) -> Result<(), String> {
    match engine {
        Engine::Lmdb | Engine::LmdbSealed => {
            let env = lmdb_env(dir);
            let db = lmdb_table(&env);
            let mut txn = env.write_txn().map_err(|e| e.to_string())?;
            db.put(&mut txn, b"EP-99999998", b"y")
                .map_err(|e| e.to_string())?;
            txn.commit().map_err(|e| e.to_string())
        }
        Engine::Redb => {
            let db = redb_db(dir)?;
            let txn = db.begin_write().map_err(|e| e.to_string())?;
            {
                let mut t = txn.open_table(REDB).map_err(|e| e.to_string())?;
                t.insert("EP-99999998", b"y".as_slice())
                    .map_err(|e| e.to_string())?;
            }
            txn.commit().map_err(|e| e.to_string())
        }
        Engine::Sqlite => {
            let c = sqlite_db(dir)?;
            c.execute("INSERT OR REPLACE INTO kv VALUES ('EP-99999998', x'01')", [])
                .map_err(|e| e.to_string())
                .map(|_| ())
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Damage {
    Half,
    Small,
    PageShort,
    Page(u64),
    Flip(u64),
}

fn damage(file: &Path, d: Damage) {
    let mut bytes = std::fs::read(file).unwrap();
    let len = bytes.len();
    match d {
        Damage::Half => bytes.truncate(len / 2),
        Damage::Small => bytes.truncate(8192.min(len / 2)),
        Damage::PageShort => bytes.truncate(len - 4096.min(len / 2)),
        Damage::Page(seed) => {
            let mut rng = fastrand::Rng::with_seed(seed);
            let at = rng.usize(0..len.div_ceil(4096)) * 4096;
            let end = (at + 4096).min(len);
            rng.fill(&mut bytes[at..end]);
        }
        Damage::Flip(seed) => {
            let mut rng = fastrand::Rng::with_seed(seed);
            let at = rng.usize(0..len - 16);
            for b in &mut bytes[at..at + 16] {
                *b ^= rng.u8(1..=255);
            }
        }
    }
    std::fs::write(file, bytes).unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        let name = name.to_string_lossy();
        // Only the data file and what belongs with it; LMDB's lock file is made afresh.
        if name != "lock.mdb" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The corruption campaign on one engine: each damage to a copy of an `n`-record database,
/// then a full verified scan in a child process.
fn campaign(engine: Engine, root: &Path, n: usize, pages: u64, flips: u64) -> Value {
    let base = root.join(format!("base-{}", engine.name()));
    write(engine, &base, n);
    if engine == Engine::Sqlite {
        // Fold the WAL into the database file, which is what the damage goes to.
        let c = sqlite_db(&base).unwrap();
        c.pragma_update(None, "wal_checkpoint", "TRUNCATE").unwrap();
    }
    let mut damages = vec![Damage::Half, Damage::Small, Damage::PageShort];
    damages.extend((0..pages).map(|s| Damage::Page(s * 7919 + 13)));
    damages.extend((0..flips).map(|s| Damage::Flip(s * 104_729 + 101)));
    let (mut signals, mut hangs, mut detected, mut wrong, mut unaffected) = (0, 0, 0, 0, 0);
    let mut lies = Vec::new();
    for (i, d) in damages.iter().enumerate() {
        let dir = root.join(format!("damaged-{}-{i}", engine.name()));
        copy_dir(&base, &dir);
        damage(&engine.file(&dir), *d);
        let (status, out, hung) = child(
            &["scan", engine.name(), dir.to_str().unwrap(), &n.to_string()],
            Duration::from_secs(60),
        );
        let out = out.trim();
        if hung {
            hangs += 1;
        } else if status.signal().is_some() {
            signals += 1;
        } else if out == "ok" {
            unaffected += 1;
        } else if out.starts_with("WRONG") {
            wrong += 1;
            lies.push(format!("{d:?}: {out}"));
        } else {
            detected += 1;
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    std::fs::remove_dir_all(&base).ok();
    json!({
        "records": n,
        "damages": damages.len(),
        "signals": signals,
        "hangs": hangs,
        "detected": detected,
        "wrong_answers": wrong,
        "no_effect": unaffected,
        "wrong": lies,
    })
}

fn flag(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map_or(default, |v| v.parse().unwrap())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("scan") => {
            let engine = Engine::parse(&args[1]);
            let n: usize = args[3].parse().unwrap();
            let outcome = std::panic::catch_unwind(|| scan(engine, Path::new(&args[2]), n));
            match outcome {
                Ok(Ok(())) => println!("ok"),
                Ok(Err(e)) => println!("{e}"),
                Err(_) => println!("error: a panic"),
            }
        }
        Some("stat") => {
            // Pages of each named table of an LMDB environment: where its bytes go.
            let env = lmdb_env(Path::new(&args[1]));
            for name in &args[2..] {
                let opened = env
                    .open_databases_and_commit(env.read_txn().unwrap(), |dbo, t| {
                        Ok::<_, heed::Error>(heed::CommitOrAbort::<_, ()>::Commit(
                            dbo.open_database::<heed::types::Bytes, heed::types::Bytes>(
                                t,
                                Some(name),
                            )?,
                        ))
                    })
                    .unwrap()
                    .commit()
                    .flatten();
                if let Some(db) = opened {
                    let txn = env.read_txn().unwrap();
                    let s = db.stat(&txn).unwrap();
                    let (mut keys, mut values, mut n) = (0usize, 0usize, 0usize);
                    for row in db.iter(&txn).unwrap() {
                        let (k, v) = row.unwrap();
                        keys += k.len();
                        values += v.len();
                        n += 1;
                    }
                    println!(
                        "{name}: entries {} depth {} branch {} leaf {} overflow {}; mean key {:.1} value {:.1} bytes",
                        s.entries,
                        s.depth,
                        s.branch_pages,
                        s.leaf_pages,
                        s.overflow_pages,
                        keys as f64 / n.max(1) as f64,
                        values as f64 / n.max(1) as f64
                    );
                }
            }
        }
        Some("probe-read") => match probe_read(Engine::parse(&args[1]), Path::new(&args[2])) {
            Ok(n) => println!("read {n} records"),
            Err(e) => {
                println!("{e}");
                std::process::exit(1);
            }
        },
        Some("probe-write") => {
            if let Err(e) = probe_write(Engine::parse(&args[1]), Path::new(&args[2])) {
                println!("{e}");
                std::process::exit(1);
            }
        }
        Some("all") => {
            let records = flag(&args, "--records", 1_000_000);
            let small = flag(&args, "--campaign-records", 20_000);
            let pages = flag(&args, "--pages", 20) as u64;
            let flips = flag(&args, "--flips", 60) as u64;
            let root = tempfile::tempdir_in(std::env::var_os("STORE_ENGINES_DIR").unwrap_or(".".into())).unwrap();
            let mut out = serde_json::Map::new();
            let only = args
                .iter()
                .position(|a| a == "--only")
                .and_then(|i| args.get(i + 1))
                .map(|e| Engine::parse(e));
            for engine in Engine::ALL.into_iter().filter(|e| only.is_none_or(|o| o == *e)) {
                eprintln!("{}: scale", engine.name());
                let s = scale(engine, root.path(), records);
                eprintln!("{}: processes", engine.name());
                let p = processes(engine, root.path());
                eprintln!("{}: campaign", engine.name());
                let c = campaign(engine, root.path(), small, pages, flips);
                out.insert(
                    engine.name().into(),
                    json!({"scale": s, "processes": p, "campaign": c}),
                );
            }
            println!("{}", serde_json::to_string_pretty(&Value::Object(out)).unwrap());
        }
        _ => {
            eprintln!(
                "usage: store-engines all [--records N] [--campaign-records N] [--pages N] \
                 [--flips N] [--only ENGINE]"
            );
            std::process::exit(2);
        }
    }
}
