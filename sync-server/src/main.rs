//! `sync-server`: serve the sync API, or manage its users. The crate's layout is described
//! in `lib.rs`; the REST contract is `openapi.yaml`.

use std::time::Duration;

use clap::{Parser, Subcommand};
use sync_server::auth::{Role, add_user};
use sync_server::store::Store;
use sync_server::{Config, serve};

#[derive(Parser)]
#[command(name = "sync-server", version, about = "The AlphaScout sync server")]
struct Cli {
    /// Where to listen (loopback by default).
    #[arg(long, default_value = "127.0.0.1:8787", global = true)]
    addr: String,
    /// sqlite://PATH or postgres://USER:PASSWORD@HOST/DB.
    #[arg(long, default_value = "sqlite://data/sync.db", global = true, env = "SYNC_DATABASE_URL")]
    database_url: String,
    /// An allowed CORS origin (repeat for several); by default any chrome-extension:// origin.
    #[arg(long = "cors-origin")]
    cors_origins: Vec<String>,
    /// Seconds a connection may wait before its request's head has arrived, kept-alive ones
    /// between requests too (so also the idle timeout).
    #[arg(long, default_value_t = Config::default().head_timeout.as_secs())]
    head_timeout_secs: u64,
    /// Seconds a request body may take to arrive.
    #[arg(long, default_value_t = Config::default().body_timeout.as_secs())]
    body_timeout_secs: u64,
    /// Connections open at once; more are answered 503 and closed.
    #[arg(long, default_value_t = Config::default().max_connections)]
    max_connections: usize,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API (the default).
    Serve,
    /// Manage users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create a user and print their bearer token (shown once; stored hashed).
    Add {
        /// The user id, e.g. alice (a-z, 0-9, '.', '_', '-').
        name: String,
        /// annotator | reviewer | qa_manager | admin
        #[arg(value_parser = parse_role, required_unless_present = "role_flag")]
        role: Option<Role>,
        /// The role, as a flag (`--role annotator`).
        #[arg(long = "role", value_parser = parse_role, conflicts_with = "role")]
        role_flag: Option<Role>,
        /// A display name (default: the id).
        #[arg(long)]
        display_name: Option<String>,
    },
}

fn parse_role(text: &str) -> Result<Role, String> {
    Role::parse(text).ok_or_else(|| "expected annotator, reviewer, qa_manager or admin".into())
}

#[tokio::main]
async fn main() {
    let cli = Cli::parse();
    if let Err(message) = run(cli).await {
        eprintln!("sync-server: {message}");
        std::process::exit(1);
    }
}

async fn run(cli: Cli) -> Result<(), String> {
    let store = Store::connect(&cli.database_url).await?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => {
            let listener = tokio::net::TcpListener::bind(&cli.addr)
                .await
                .map_err(|e| format!("cannot listen on {}: {e}", cli.addr))?;
            let addr = listener.local_addr().map_err(|e| e.to_string())?;
            eprintln!("sync-server: listening on http://{addr} ({})", store.backend.name());
            let config = Config {
                cors_origins: cli.cors_origins,
                head_timeout: Duration::from_secs(cli.head_timeout_secs.max(1)),
                body_timeout: Duration::from_secs(cli.body_timeout_secs.max(1)),
                max_connections: cli.max_connections.max(1),
                ..Config::default()
            };
            let shutdown = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            serve(listener, store, config, shutdown).await.map_err(|e| e.to_string())
        }
        Command::User { command: UserCommand::Add { name, role, role_flag, display_name } } => {
            let role = role.or(role_flag).ok_or("a role is required")?;
            let display = display_name.unwrap_or_else(|| name.clone());
            let token = add_user(&store, &name, &display, role).await?;
            println!("{token}");
            eprintln!(
                "sync-server: added {name} ({}); send the token as Authorization: Bearer <token>",
                role.as_str()
            );
            Ok(())
        }
    }
}
