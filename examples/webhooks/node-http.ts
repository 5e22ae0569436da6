// A duetime webhook receiver on plain node:http.
// Run: DUETIME_WEBHOOK_SECRET=whsec_... PORT=3000 npx tsx examples/webhooks/node-http.ts
import { createServer } from "node:http";
import { verifyWebhook, WebhookVerificationError } from "duetime/webhooks";

const secret = process.env.DUETIME_WEBHOOK_SECRET ?? "";

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    try {
      // Verify the raw bytes as received, before parsing anything.
      const delivery = verifyWebhook({ secret, headers: req.headers, body: Buffer.concat(chunks) });
      console.log(`verified job ${delivery.id} attempt ${delivery.attempt}`);
      res.writeHead(204).end(); // any 2xx: duetime marks the job succeeded
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      console.log(`refused: ${err.reason}`);
      res.writeHead(401).end(); // a 4xx other than 408/429: duetime does not retry
    }
  });
});

server.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${port}/hooks/duetime`);
});
