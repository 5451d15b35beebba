//! The native host's one table of who waits for what: MCP clients by number, requests to
//! the worker by id. Every connection's handler asks through it, and the bridge's reader
//! delivers each worker message through it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use mcp_tools::bridge::{FromExtension, ToExtension};
use tokio::sync::mpsc;

/// `P` is how a client is told of changed tools: rmcp's `Peer` in the host, anything in
/// tests.
pub struct Hub<P> {
    to_extension: mpsc::UnboundedSender<ToExtension>,
    next_id: AtomicU64,
    next_client: AtomicU32,
    waiting: Mutex<HashMap<u64, mpsc::UnboundedSender<FromExtension>>>,
    clients: Mutex<HashMap<u32, P>>,
}

/// What became of one message from the worker.
#[derive(Debug)]
pub enum Delivery<P> {
    /// Handed to the request that waits for it.
    Routed,
    /// Nobody waits for this id any more (the client cancelled or went away).
    Unclaimed(u64),
    /// The worker said hello: which extension version answers.
    Hello(String),
    /// Tools were published or withdrawn: tell these clients.
    ToolsChanged(Vec<P>),
}

impl<P: Clone> Hub<P> {
    /// Messages for the worker go to `to_extension`, in order.
    pub fn new(to_extension: mpsc::UnboundedSender<ToExtension>) -> Hub<P> {
        Hub {
            to_extension,
            next_id: AtomicU64::new(1),
            next_client: AtomicU32::new(1),
            waiting: Mutex::default(),
            clients: Mutex::default(),
        }
    }

    fn send(&self, message: ToExtension) {
        // Fails only while the process ends (the bridge's writer is gone).
        let _ = self.to_extension.send(message);
    }

    /// A client finished `initialize`: numbers it, remembers how to reach it and tells
    /// the worker.
    pub fn client_connected(&self, name: &str, version: &str, transport: &str, peer: P) -> u32 {
        let client = self.next_client.fetch_add(1, Ordering::Relaxed);
        self.clients.lock().unwrap().insert(client, peer);
        self.send(ToExtension::ClientConnected {
            client,
            name: name.to_owned(),
            version: version.to_owned(),
            transport: transport.to_owned(),
        });
        client
    }

    pub fn client_gone(&self, client: u32) {
        self.clients.lock().unwrap().remove(&client);
        self.send(ToExtension::ClientGone { client });
    }

    /// Sends the request `make` builds with a fresh id; its answers come through the
    /// returned [`Waiting`].
    pub fn ask(&self, make: impl FnOnce(u64) -> ToExtension) -> Waiting<'_, P> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, answers) = mpsc::unbounded_channel();
        self.waiting.lock().unwrap().insert(id, sender);
        self.send(make(id));
        Waiting { hub: self, id, answers, answered: false }
    }

    /// Routes one message from the worker.
    pub fn deliver(&self, message: FromExtension) -> Delivery<P> {
        let id = match &message {
            FromExtension::Hello { version } => return Delivery::Hello(version.clone()),
            FromExtension::ToolsChanged => {
                return Delivery::ToolsChanged(
                    self.clients.lock().unwrap().values().cloned().collect(),
                );
            }
            FromExtension::Tools { id, .. }
            | FromExtension::Progress { id, .. }
            | FromExtension::Result { id, .. }
            | FromExtension::Error { id, .. } => *id,
        };
        let waiting = self.waiting.lock().unwrap();
        match waiting.get(&id) {
            Some(sender) if sender.send(message).is_ok() => Delivery::Routed,
            _ => Delivery::Unclaimed(id),
        }
    }
}

/// One request to the worker, waiting for its answers. Dropped before the final answer
/// (the client cancelled, or its connection closed), it tells the worker to stop waiting.
pub struct Waiting<'a, P: Clone> {
    hub: &'a Hub<P>,
    pub id: u64,
    answers: mpsc::UnboundedReceiver<FromExtension>,
    answered: bool,
}

impl<P: Clone> Waiting<'_, P> {
    /// The next message for this request: progress, then one final answer. `None` only if
    /// the hub is gone.
    pub async fn next(&mut self) -> Option<FromExtension> {
        let message = self.answers.recv().await?;
        self.answered |= !matches!(message, FromExtension::Progress { .. });
        Some(message)
    }
}

impl<P: Clone> Drop for Waiting<'_, P> {
    fn drop(&mut self) {
        self.hub.waiting.lock().unwrap().remove(&self.id);
        if !self.answered {
            self.hub.send(ToExtension::Cancel { id: self.id });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_tools::bridge::{Content, ErrorCode};

    fn hub() -> (Hub<&'static str>, mpsc::UnboundedReceiver<ToExtension>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Hub::new(sender), receiver)
    }

    fn result(id: u64) -> FromExtension {
        FromExtension::Result {
            id,
            content: vec![Content::Text { text: "done".into() }],
            structured: None,
            is_error: false,
        }
    }

    #[tokio::test]
    async fn answers_reach_the_request_with_their_id_and_ids_are_unique() {
        let (hub, mut sent) = hub();
        let mut first = hub.ask(|id| ToExtension::ListTools { id, client: 1 });
        let mut second = hub.ask(|id| ToExtension::ListTools { id, client: 2 });
        assert_ne!(first.id, second.id);
        assert_eq!(sent.recv().await, Some(ToExtension::ListTools { id: first.id, client: 1 }));
        let progress = FromExtension::Progress {
            id: second.id,
            progress: 1.0,
            total: None,
            message: Some("step 1".into()),
        };
        assert!(matches!(hub.deliver(progress.clone()), Delivery::Routed));
        assert!(matches!(hub.deliver(result(second.id)), Delivery::Routed));
        assert!(matches!(hub.deliver(result(first.id)), Delivery::Routed));
        assert_eq!(second.next().await, Some(progress));
        assert_eq!(second.next().await, Some(result(second.id)));
        assert_eq!(first.next().await, Some(result(first.id)));
    }

    #[tokio::test]
    async fn a_request_given_up_before_its_answer_is_cancelled_and_its_answer_unclaimed() {
        let (hub, mut sent) = hub();
        let given_up = hub.ask(|id| ToExtension::ListTools { id, client: 1 });
        let id = given_up.id;
        drop(given_up);
        sent.recv().await;
        assert_eq!(sent.recv().await, Some(ToExtension::Cancel { id }));
        let late = FromExtension::Error { id, code: ErrorCode::Busy, message: "x".into() };
        assert!(matches!(hub.deliver(late), Delivery::Unclaimed(i) if i == id));

        // One that was answered is not cancelled.
        let mut answered = hub.ask(|id| ToExtension::ListTools { id, client: 1 });
        hub.deliver(result(answered.id));
        answered.next().await;
        drop(answered);
        sent.recv().await;
        assert!(sent.try_recv().is_err());
    }

    #[tokio::test]
    async fn clients_are_numbered_announced_and_told_of_changed_tools_until_gone() {
        let (hub, mut sent) = hub();
        let desktop = hub.client_connected("claude", "1.0", "stdio", "desktop");
        let agent = hub.client_connected("agent", "2", "http", "agent");
        assert_ne!(desktop, agent);
        assert_eq!(
            sent.recv().await,
            Some(ToExtension::ClientConnected {
                client: desktop,
                name: "claude".into(),
                version: "1.0".into(),
                transport: "stdio".into()
            })
        );
        hub.client_gone(desktop);
        let Delivery::ToolsChanged(told) = hub.deliver(FromExtension::ToolsChanged) else {
            panic!("tools changed is for the clients")
        };
        assert_eq!(told, vec!["agent"]);
        sent.recv().await;
        assert_eq!(sent.recv().await, Some(ToExtension::ClientGone { client: desktop }));
    }
}
