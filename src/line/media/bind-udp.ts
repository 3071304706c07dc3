/**
 * Binds a UDP socket for one media stream (RTP or UDPTL) and resolves once it is bound; a bind
 * error (the port is taken, the address is not ours) rejects. `closeQuietly` closes one whose
 * owner may have closed it already.
 */
import dgram from "node:dgram";

export async function bindUdpSocket(address = "0.0.0.0", port = 0): Promise<dgram.Socket> {
  const socket = dgram.createSocket("udp4");
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, address, () => {
      socket.off("error", reject);
      resolve();
    });
  });
  return socket;
}

/** Closes a media socket that may be closed already (by whoever took it over). */
export function closeQuietly(socket: dgram.Socket | undefined): void {
  try {
    socket?.close();
  } catch {
    // closed already
  }
}
