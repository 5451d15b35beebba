//! `sync-server`: serve the sync API, or manage its users. The crate's layout is described
//! in `lib.rs`; the REST contract is `openapi.yaml`.

use std::time::Duration;

use clap::{Parser, Subcommand};
use sync_server::auth::{Role, add_user_until, list_users, revoke_token, rotate_token};
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
    /// Seconds a write may wait for the client to take bytes before the connection is
    /// dropped.
    #[arg(long, default_value_t = Config::default().write_timeout.as_secs())]
    write_timeout_secs: u64,
    /// Connections open at once. At the limit a new one closes the connection idle longest;
    /// if every one has a request in progress, it is answered 503 and closed.
    #[arg(long, default_value_t = Config::default().max_connections)]
    max_connections: usize,
    /// Connections open at once from one address (IPv4, or IPv6 /64), likewise; a quarter of
    /// --max-connections by default. Behind a reverse proxy, set it to --max-connections.
    #[arg(long)]
    max_connections_per_peer: Option<usize>,
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
        #[command(flatten)]
        lifetime: Lifetime,
    },
    /// List the users, their roles and whether their tokens are valid (never the tokens).
    List,
    /// A user's token.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Give the user a new token and print it; the old one stops working at once.
    Rotate {
        name: String,
        #[command(flatten)]
        lifetime: Lifetime,
    },
    /// Stop the user's token from working, until it is rotated.
    Revoke { name: String },
}

/// How long a new token is valid.
#[derive(clap::Args)]
struct Lifetime {
    /// Days until the token expires.
    #[arg(long, default_value_t = 90, conflicts_with = "no_expiry")]
    expires_in_days: u32,
    /// The token does not expire.
    #[arg(long)]
    no_expiry: bool,
}

impl Lifetime {
    /// When the token expires, in milliseconds since the epoch.
    fn expires_ms(&self) -> Option<i64> {
        let day = 24 * 3600 * 1000;
        (!self.no_expiry)
            .then(|| sync_server::time::now_ms() + i64::from(self.expires_in_days) * day)
    }

    fn describe(&self) -> String {
        match self.expires_ms() {
            Some(ms) => format!("valid until {}", sync_server::time::format_ms(ms)),
            None => "with no expiry".to_owned(),
        }
    }
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
                write_timeout: Duration::from_secs(cli.write_timeout_secs.max(1)),
                max_connections: cli.max_connections.max(1),
                max_connections_per_peer: cli
                    .max_connections_per_peer
                    .unwrap_or(cli.max_connections / 4)
                    .max(1),
                ..Config::default()
            };
            let shutdown = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            serve(listener, store, config, shutdown).await.map_err(|e| e.to_string())
        }
        Command::User { command } => user(&store, command).await,
    }
}

async fn user(store: &Store, command: UserCommand) -> Result<(), String> {
    let bearer = "send it as Authorization: Bearer <token>";
    match command {
        UserCommand::Add { name, role, role_flag, display_name, lifetime } => {
            let role = role.or(role_flag).ok_or("a role is required")?;
            let display = display_name.unwrap_or_else(|| name.clone());
            let expires = lifetime.expires_ms();
            let token = add_user_until(store, &name, &display, role, expires).await?;
            println!("{token}");
            eprintln!(
                "sync-server: added {name} ({}), token {}; {bearer}",
                role.as_str(),
                lifetime.describe()
            );
        }
        UserCommand::List => {
            let now = sync_server::time::now();
            for user in list_users(store).await? {
                println!(
                    "{}\t{}\t{}\ttoken {}",
                    user.id,
                    user.role,
                    user.name,
                    user.token_state(&now)
                );
            }
        }
        UserCommand::Token { command: TokenCommand::Rotate { name, lifetime } } => {
            let token = rotate_token(store, &name, lifetime.expires_ms()).await?;
            println!("{token}");
            eprintln!(
                "sync-server: new token for {name}, {}; the old one no longer works; {bearer}",
                lifetime.describe()
            );
        }
        UserCommand::Token { command: TokenCommand::Revoke { name } } => {
            revoke_token(store, &name).await?;
            eprintln!(
                "sync-server: {name}'s token no longer works; `user token rotate {name}` gives \
                 a new one"
            );
        }
    }
    Ok(())
}
