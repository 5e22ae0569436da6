// A duetime webhook receiver on Express.
// Run: DUETIME_WEBHOOK_SECRET=whsec_... PORT=3000 npx tsx examples/webhooks/express.ts
import express from "express";
import { verifyWebhook, WebhookVerificationError } from "duetime/webhooks";

const secret = process.env.DUETIME_WEBHOOK_SECRET ?? "";
const app = express();

// express.raw keeps the body as the bytes received: the signature covers those bytes.
app.post("/hooks/duetime", express.raw({ type: "application/json" }), (req, res) => {
  try {
    const delivery = verifyWebhook({ secret, headers: req.headers, body: req.body as Buffer });
    console.log(`verified job ${delivery.id} attempt ${delivery.attempt}`);
    res.sendStatus(204);
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    console.log(`refused: ${err.reason}`);
    res.sendStatus(401);
  }
});

const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${port}/hooks/duetime`);
});
