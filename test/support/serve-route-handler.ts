import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Serves a Next.js App Router route handler module (one exporting `POST(request: Request)`)
 * on 127.0.0.1 the way Next.js calls it: a Web Request in, a Web Response out. The tests run
 * examples/webhooks/nextjs through this instead of `next dev`, which is too heavy for the
 * shared test machine; the handler itself only touches the Web Request/Response API.
 * Usage: tsx serve-route-handler.ts <module> <path>; prints `listening on <url>`.
 */
type RouteHandler = (request: Request) => Promise<Response>;

const [modulePath, routePath = "/"] = process.argv.slice(2);
if (modulePath === undefined) throw new Error("usage: serve-route-handler <module> [path]");
const route = (await import(pathToFileURL(resolve(modulePath)).href)) as { POST?: RouteHandler };
const post = route.POST;
if (post === undefined) throw new Error(`${modulePath} exports no POST handler`);

async function toRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  }
  const body = chunks.length === 0 ? null : Buffer.concat(chunks);
  return new Request(new URL(req.url ?? "/", origin), { method: req.method, headers, body });
}

async function answer(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

const server = createServer((req, res) => {
  const origin = `http://${req.headers.host ?? "127.0.0.1"}`;
  if (req.method !== "POST" || !(req.url ?? "").startsWith(routePath)) {
    res.writeHead(req.method === "POST" ? 404 : 405).end();
    return;
  }
  toRequest(req, origin)
    .then(post)
    .then((response) => answer(response, res))
    .catch((err: unknown) => {
      console.error(err);
      res.writeHead(500).end();
    });
});
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${port}${routePath}`);
});
