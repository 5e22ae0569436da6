// A duetime webhook receiver on Fastify.
// Run: DUETIME_WEBHOOK_SECRET=whsec_... PORT=3000 npx tsx examples/webhooks/fastify.ts
import Fastify from "fastify";
import { verifyWebhook, WebhookVerificationError } from "duetime/webhooks";

const secret = process.env.DUETIME_WEBHOOK_SECRET ?? "";
const app = Fastify();

// Keep JSON bodies as the bytes received (the signature covers those bytes), in this scope.
app.removeContentTypeParser("application/json");
app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_req, body, done) => {
  done(null, body);
});

app.post("/hooks/duetime", async (request, reply) => {
  try {
    const delivery = verifyWebhook({
      secret,
      headers: request.headers,
      body: request.body as Buffer,
    });
    console.log(`verified job ${delivery.id} attempt ${delivery.attempt}`);
    return reply.code(204).send();
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    console.log(`refused: ${err.reason}`);
    return reply.code(401).send();
  }
});

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: "127.0.0.1" });
console.log(`listening on ${address}/hooks/duetime`);
