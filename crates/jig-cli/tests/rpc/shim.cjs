// Pi's RpcClient starts `node <cliPath> --mode rpc …`; this makes that `jig run --mode rpc …`.
const { spawn } = require("node:child_process");
const child = spawn(process.env.JIG_BIN, ["run", ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
