// A duetime webhook receiver as a Next.js App Router route handler
// (app/api/duetime/route.ts): Next.js calls POST with a Web Request and sends the Response.
import { verifyWebhook, WebhookVerificationError } from "duetime/webhooks";

export async function POST(request: Request): Promise<Response> {
  // The raw bytes, before any JSON parsing: the signature covers those bytes.
  const body = new Uint8Array(await request.arrayBuffer());
  try {
    const delivery = verifyWebhook({
      secret: process.env.DUETIME_WEBHOOK_SECRET ?? "",
      headers: request.headers,
      body,
    });
    console.log(`verified job ${delivery.id} attempt ${delivery.attempt}`);
    return new Response(null, { status: 204 });
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    console.log(`refused: ${err.reason}`);
    return new Response(null, { status: 401 });
  }
}
