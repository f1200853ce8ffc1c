/**
 * A DNS server on loopback (dns2, UDP) answering TXT questions from a table the test fills:
 * what a domain's owner publishes. The service is pointed at it with SERVICE_IDP_DNS_SERVERS.
 */
import dns2 from 'dns2';

export interface TestDns {
  /** `127.0.0.1:port`, for SERVICE_IDP_DNS_SERVERS. */
  server: string;
  /** Publishes TXT records at a name (each record as its character-strings); [] removes them. */
  publish(name: string, records: string[][]): void;
  /** The names asked, in order. */
  asked: string[];
  close(): Promise<void>;
}

export async function startDns(): Promise<TestDns> {
  // dns2's declarations lack RCODE and type answers as encoded resources: its runtime takes plain objects.
  const Packet = dns2.Packet as any;
  const table = new Map<string, string[][]>();
  const asked: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request: any, send: (response: any) => void) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = String(question.name).toLowerCase();
      asked.push(name);
      const records = table.get(name);
      if (!records || records.length === 0) response.header.rcode = Packet.RCODE.NXDOMAIN;
      else
        for (const data of records)
          response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data });
      send(response);
    },
  });
  const listening = new Promise<void>((resolve) => server.on('listening', () => resolve()));
  await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  await listening;
  const port = (server.addresses() as any).udp.port as number;
  return {
    server: `127.0.0.1:${port}`,
    publish: (name, records) => table.set(name.toLowerCase(), records),
    asked,
    close: () => server.close(),
  };
}
