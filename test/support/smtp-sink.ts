import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerDataStream } from "smtp-server";

/** One message the sink accepted (answered 250 to), its parts decoded. */
export interface ReceivedEmail {
  to: string[];
  from: string;
  messageId: string;
  subject: string;
  text: string;
  html: string;
  raw: string;
}

export interface SmtpSink {
  url: string;
  received: ReceivedEmail[];
  /** Decides each RCPT TO: undefined accepts; a [code, message] refuses with that reply. */
  onRecipient: (address: string) => [number, string] | undefined;
  /** When set, DATA is read but not answered until the returned promise settles (a sender killed mid-send). */
  holdData: ((raw: string) => Promise<void>) | undefined;
  close(): Promise<void>;
}

/** A real SMTP server (smtp-server) on a free port, no TLS, no auth, keeping what it accepted. */
export async function startSmtpSink(): Promise<SmtpSink> {
  const sink: SmtpSink = {
    url: "",
    received: [],
    onRecipient: () => undefined,
    holdData: undefined,
    close: async () => {},
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onRcptTo(address, _session, callback) {
      const refusal = sink.onRecipient(address.address);
      if (!refusal) return callback();
      const err = Object.assign(new Error(refusal[1]), { responseCode: refusal[0] });
      callback(err);
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const accept = () => {
          sink.received.push({
            ...parseMessage(raw),
            to: session.envelope.rcptTo.map((r) => r.address),
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          });
          callback();
        };
        if (sink.holdData)
          void sink.holdData(raw).then(
            () => callback(new Error("not accepted")),
            () => callback(new Error("not accepted")),
          );
        else accept();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  sink.url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return sink;
}

/** Headers unfolded, by lower-case name. */
function headersOf(block: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of block.replace(/\r\n[ \t]+/g, " ").split("\r\n")) {
    const at = line.indexOf(":");
    if (at > 0) map.set(line.slice(0, at).trim().toLowerCase(), line.slice(at + 1).trim());
  }
  return map;
}

function decode(body: string, encoding: string | undefined): string {
  if (encoding?.toLowerCase() === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  if (encoding?.toLowerCase() === "quoted-printable") {
    const bytes = body.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, "latin1").toString("utf8");
  }
  return body;
}

/** An encoded-word subject (=?UTF-8?Q?…?= / =?UTF-8?B?…?=) in plain text. */
function decodeWords(value: string): string {
  return value.replace(/=\?utf-8\?([QB])\?([^?]*)\?=\s*/gi, (_, kind: string, text: string) =>
    kind.toUpperCase() === "B" ? Buffer.from(text, "base64").toString("utf8") : decode(text.replace(/_/g, " "), "quoted-printable"),
  );
}

/** Enough MIME for the tests: a single part or a multipart/alternative of text and HTML. */
function parseMessage(raw: string): Omit<ReceivedEmail, "to" | "from"> {
  const split = raw.indexOf("\r\n\r\n");
  const headers = headersOf(raw.slice(0, split));
  const body = raw.slice(split + 4);
  const parts: { type: string; content: string }[] = [];
  const boundary = /boundary="?([^";]+)"?/i.exec(headers.get("content-type") ?? "")?.[1];
  if (boundary) {
    for (const piece of body.split(`--${boundary}`).slice(1)) {
      if (piece.startsWith("--")) break;
      const at = piece.indexOf("\r\n\r\n");
      const h = headersOf(piece.slice(0, at).replace(/^\r\n/, ""));
      parts.push({ type: h.get("content-type") ?? "", content: decode(piece.slice(at + 4).replace(/\r\n$/, ""), h.get("content-transfer-encoding")) });
    }
  } else {
    parts.push({ type: headers.get("content-type") ?? "", content: decode(body, headers.get("content-transfer-encoding")) });
  }
  return {
    messageId: headers.get("message-id") ?? "",
    subject: decodeWords(headers.get("subject") ?? ""),
    text: parts.find((p) => p.type.startsWith("text/plain"))?.content ?? "",
    html: parts.find((p) => p.type.startsWith("text/html"))?.content ?? "",
    raw,
  };
}
