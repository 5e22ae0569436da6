/** One Server-Sent Events frame as a test reads it. */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

/**
 * Reads SSE frames from a streaming fetch response: `next()` resolves with the next frame,
 * or null once the server has ended the stream.
 */
export function sseFrames(res: Response): { next: () => Promise<SseFrame | null> } {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return {
    async next(): Promise<SseFrame | null> {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          const raw = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const f: SseFrame = {};
          for (const line of raw.split("\n")) {
            if (line.startsWith(":")) f.comment = line.slice(1).trim();
            else if (line.startsWith("id: ")) f.id = line.slice(4);
            else if (line.startsWith("event: ")) f.event = line.slice(7);
            else if (line.startsWith("data: ")) f.data = line.slice(6);
          }
          if (f.event || f.comment || f.data) return f;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) return null;
        buffer += value;
      }
    },
  };
}

/** Reads frames until one matches; throws if the stream ends first. */
export async function nextMatching(
  s: { next: () => Promise<SseFrame | null> },
  pred: (f: SseFrame) => boolean,
): Promise<SseFrame> {
  for (;;) {
    const f = await s.next();
    if (f === null) throw new Error("stream ended");
    if (pred(f)) return f;
  }
}
