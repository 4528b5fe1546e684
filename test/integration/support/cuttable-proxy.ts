import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server that a test can cut and restore: an outage on demand, without
 * stopping the shared server. `cut` closes every open connection and stops listening (clients
 * get "connection refused"); `open` listens again on the same port.
 */
export class CuttableProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** A proxy in front of the host and port of a URL (`bolt://127.0.0.1:7687`, `http://…`). */
  static forUrl(url: string, defaultPort: number): CuttableProxy {
    const parsed = new URL(url);
    return new CuttableProxy(parsed.hostname, Number(parsed.port || defaultPort));
  }

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}
