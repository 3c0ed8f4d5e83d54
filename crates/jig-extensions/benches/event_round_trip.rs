//! What extensions cost per event.
//!
//! ```text
//! cargo bench -p jig-extensions --bench event_round_trip [-- -n 5000]
//! ```
//!
//! 1. **Round trip to a process extension**: a small `tool_call` decision (`{"toolCallId",
//!    "toolName": "bash", "input": {"command": "ls -la"}}` → `null`) through
//!    `ExtensionRunner::tool_call` to a long-lived Python extension (`tests/it/fixtures/ext.py
//!    quiet`) over JSON-RPC on pipes; start-up and 200 warm-up calls are not timed. Python's own
//!    JSON handling is part of the number, so it is an upper bound for the transport.
//! 2. **Round trip to a Pi extension**: the same call to a Pi module
//!    (`pi.on("tool_call", () => undefined)`) in jig's Node host, which maps Pi's API onto the
//!    protocol (skipped, with a notice, when the host's npm dependencies are not installed).
//! 3. **No subscriber**: `tool_call` and `tool_result` on a runner whose only extension handles
//!    other events, against doing nothing, in batches of 1000 calls to get above the clock's
//!    resolution.
#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]
#![expect(
    clippy::disallowed_methods,
    reason = "the benchmark writes its Pi module fixture to a temporary directory"
)]

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use jig_extensions::{
    ExtensionHandle, ExtensionRunner, InProcessExtension, LoadOptions, Timeouts, ToolCallOutcome,
    load_pi, load_process, locate_pi_host,
};
use jig_protocol::ToolResult;
use serde_json::{Value, json};
use std::sync::Arc;

const WARMUP: usize = 200;

fn main() -> Result<()> {
    let mut calls = 5000;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "-n" {
            calls = args.next().context("-n needs a number")?.parse()?;
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/ext.py");
        let python = load_process(
            &fixture,
            &[
                "python3".into(),
                fixture.clone().into_os_string(),
                "quiet".into(),
            ],
            &LoadOptions::new(dir.path()),
        )
        .await
        .map_err(|error| anyhow::anyhow!("{error}"))?;
        round_trip(
            calls,
            python,
            "tool_call round trip, Python process extension",
        )
        .await?;
        match locate_pi_host() {
            Ok(_) => {
                let module = dir.path().join("gate.ts");
                std::fs::write(
                    &module,
                    "export default function (pi) { pi.on(\"tool_call\", () => undefined); }\n",
                )?;
                let pi = load_pi(dir.path(), &[module], &LoadOptions::new(dir.path()))
                    .await
                    .map_err(|error| anyhow::anyhow!("{error}"))?;
                round_trip(calls, pi, "tool_call round trip, Pi extension (Node host)").await?;
            }
            Err(reason) => println!("tool_call round trip, Pi extension: skipped ({reason})"),
        }
        no_subscriber(calls).await
    })
}

async fn round_trip(calls: usize, extension: Arc<dyn ExtensionHandle>, label: &str) -> Result<()> {
    let mut runner = ExtensionRunner::new(Timeouts::default());
    runner
        .add(extension)
        .map_err(|error| anyhow::anyhow!("{error}"))?;
    let input = json!({"command": "ls -la"});
    for _ in 0..WARMUP {
        let outcome = runner.tool_call("call-1", "bash", &input).await;
        ensure!(
            outcome == ToolCallOutcome::Allow { input: None },
            "{outcome:?}"
        );
    }
    let mut times = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        let outcome = runner.tool_call("call-1", "bash", &input).await;
        times.push(started.elapsed());
        ensure!(
            outcome == ToolCallOutcome::Allow { input: None },
            "{outcome:?}"
        );
    }
    ensure!(runner.take_errors().is_empty(), "errors during the run");
    report(label, &mut times);
    runner.shutdown().await;
    Ok(())
}

async fn no_subscriber(calls: usize) -> Result<()> {
    let mut runner = ExtensionRunner::new(Timeouts::default());
    runner
        .add(
            InProcessExtension::new("<inline:other>")
                .on("turn_end", |_| Ok(Value::Null))
                .into_handle(),
        )
        .map_err(|error| anyhow::anyhow!("{error}"))?;
    let input = json!({"command": "ls -la"});
    let batch = 1000;
    let batches = (calls / 10).max(100);
    let mut with_runner = Vec::with_capacity(batches);
    let mut baseline = Vec::with_capacity(batches);
    for _ in 0..batches {
        let started = Instant::now();
        for _ in 0..batch {
            let outcome = runner
                .tool_call(
                    std::hint::black_box("call-1"),
                    "bash",
                    std::hint::black_box(&input),
                )
                .await;
            std::hint::black_box(outcome);
        }
        with_runner.push(started.elapsed() / batch);
        let started = Instant::now();
        for _ in 0..batch {
            let outcome = std::hint::black_box(ToolCallOutcome::Allow { input: None });
            std::hint::black_box(outcome);
        }
        baseline.push(started.elapsed() / batch);
    }
    report("tool_call with no subscriber (per call)", &mut with_runner);
    report("baseline: no runner at all (per call)", &mut baseline);
    let mut results = Vec::with_capacity(batches);
    for _ in 0..batches {
        let result = ToolResult::text("out");
        let started = Instant::now();
        let result = runner.tool_result("call-1", "bash", &input, result).await;
        results.push(started.elapsed());
        std::hint::black_box(result);
    }
    report("tool_result with no subscriber (single call)", &mut results);
    Ok(())
}

fn report(name: &str, times: &mut [Duration]) {
    times.sort();
    let at = |percent: usize| times[(times.len() - 1) * percent / 100];
    println!(
        "{name}: n={} median {:?} p90 {:?} p99 {:?} min {:?}",
        times.len(),
        at(50),
        at(90),
        at(99),
        times[0]
    );
}
