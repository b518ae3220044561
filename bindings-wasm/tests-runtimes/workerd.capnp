# workerd config for the npm package's Workers test: the esbuild bundle of worker.mjs and the
# wasm module it imports, served on 127.0.0.1 (the port is substituted by the test script).
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    # the clients' requests to the fake API on 127.0.0.1 (Workers reach only public addresses by default)
    (name = "loopback", network = (allow = ["local"])),
  ],
  sockets = [(name = "http", address = "127.0.0.1:PORT", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "royaltykit_wasm_bg.wasm", wasm = embed "royaltykit_wasm_bg.wasm"),
  ],
  compatibilityDate = "2025-09-01",
  globalOutbound = "loopback",
);
