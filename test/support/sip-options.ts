/**
 * Test support: one SIP OPTIONS request outside any dialog over UDP, as a SIP load balancer probes
 * a node or a carrier keeps its trunk alive, and the status line of the answer.
 */
import dgram from "node:dgram";

let sequence = 0;

/** Sends OPTIONS to `address:port` from 127.0.0.1 and resolves with the answer's status and phrase, or null after `timeoutMs`. */
export async function sipOptions(address: string, port: number, timeoutMs = 2000): Promise<{ status: number; reason: string } | null> {
  const socket = dgram.createSocket("udp4");
  try {
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
    const local = socket.address();
    const id = `${process.pid}-${++sequence}-${Date.now()}`;
    const request = [
      `OPTIONS sip:${address}:${port} SIP/2.0`,
      `Via: SIP/2.0/UDP 127.0.0.1:${local.port};branch=z9hG4bK-probe-${id};rport`,
      "Max-Forwards: 70",
      "From: <sip:probe@127.0.0.1>;tag=probe",
      `To: <sip:${address}:${port}>`,
      `Call-ID: probe-${id}@127.0.0.1`,
      "CSeq: 1 OPTIONS",
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n");
    return await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      socket.on("message", (data) => {
        const status = /^SIP\/2\.0 (\d{3}) ([^\r\n]*)/.exec(data.toString());
        // A provisional answer is not the verdict.
        if (status === null || status[1]!.startsWith("1")) return;
        clearTimeout(timer);
        resolve({ status: Number(status[1]), reason: status[2]! });
      });
      socket.send(request, port, address);
    });
  } finally {
    socket.close();
  }
}
