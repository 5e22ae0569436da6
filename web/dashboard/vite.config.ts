import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/**
 * The dashboard's front end. `vite build --config web/dashboard/vite.config.ts` writes it to
 * dist/dashboard/web/, beside the compiled fastify plugin that serves it, so the published
 * package ships it prebuilt. `vite --config web/dashboard/vite.config.ts` serves it with hot
 * reload and proxies the API to a running `duetime serve` (DUETIME_URL, default :8080).
 */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  // Relative asset URLs: the page works wherever the service mounts it.
  base: "./",
  build: {
    outDir: fileURLToPath(new URL("../../dist/dashboard/web", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: {
    proxy: { "/v1": process.env.DUETIME_URL ?? "http://127.0.0.1:8080" },
  },
});
