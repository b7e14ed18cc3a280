# flowadmin on workerd: `workerd serve config.capnp` after `node build.mjs`.
# Another address: `--socket-addr http=127.0.0.1:8080`. The users come from the environment.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "flowadmin", worker = .flowadmin)],
  sockets = [(name = "http", address = "127.0.0.1:1880", http = (), service = "flowadmin")],
);

const flowadmin :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "dist/worker.js"),
    (name = "argon2.wasm", wasm = embed "dist/argon2.wasm"),
  ],
  compatibilityDate = "2025-09-01",
  bindings = [(name = "FLOWADMIN_ADMIN_AUTH", fromEnvironment = "FLOWADMIN_ADMIN_AUTH")],
);
