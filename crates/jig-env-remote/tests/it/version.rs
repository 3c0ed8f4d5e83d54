//! A server of another protocol version is refused at connect, with a message saying what to
//! do, before any call could be misread.

use jig_env_remote::RemoteEnv;
use jig_env_remote::protocol::{Frame, Hello, Message, PROTOCOL_VERSION, write_frame};
use tokio::io::AsyncWriteExt as _;

/// Connects to a stand-in server that greets with protocol `protocol`.
async fn connect_to_protocol(protocol: u32) -> Result<RemoteEnv, jig_env_remote::ConnectError> {
    let (client, mut server) = tokio::io::duplex(1 << 16);
    let hello = Hello {
        protocol,
        version: "0.0.1".to_owned(),
        env: "local".to_owned(),
        home: None,
        arch: std::env::consts::ARCH.to_owned(),
    };
    write_frame(&mut server, &Frame::new(Message::Hello(hello)))
        .await
        .unwrap();
    server.flush().await.unwrap();
    let (reader, writer) = tokio::io::split(client);
    let connected = RemoteEnv::connect("ssh://old-box/srv", reader, writer, None, None).await;
    drop(server);
    connected
}

#[tokio::test]
async fn older_protocols_are_refused_with_a_clear_error() {
    // 1: walk and search results in the header; 2: as JSON in the payload; 3: no read
    // window, no write of unknown size; 4: no `alive` frame, no limits on a call's answer;
    // 5: no sandbox policy on `exec` (a far side that ignored it would run commands unsandboxed).
    for old in 1..PROTOCOL_VERSION {
        let error = connect_to_protocol(old)
            .await
            .expect_err("an older server is refused");
        assert!(
            matches!(error, jig_env_remote::ConnectError::Version { theirs, .. } if theirs == old),
            "{error}"
        );
    }
    let error = connect_to_protocol(4).await.expect_err("refused");
    insta::assert_snapshot!(
        error.to_string(),
        @"ssh://old-box/srv: the far side speaks env protocol 4, this jig speaks 7; install the same jig version there"
    );
}

#[tokio::test]
async fn the_same_protocol_connects() {
    connect_to_protocol(PROTOCOL_VERSION)
        .await
        .expect("the same protocol connects");
}
