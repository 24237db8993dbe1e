import type { AnyMessage, Stream } from '@agentclientprotocol/sdk';
import type { Transport } from '../../core/transport/transport.js';

/**
 * The SDK's message stream over a One Works transport: the child's stdout lines (parsed by the
 * transport's NDJSON codec) become the readable side, writes go to the transport in order. The
 * readable side ends when the transport closes (the child's stdout reached EOF).
 */
export function transportStream(transport: Transport): Stream {
  let inbound: ReadableStreamDefaultController<AnyMessage> | undefined;
  let ended = false;
  const readable = new ReadableStream<AnyMessage>({
    start(controller) {
      inbound = controller;
    },
  });
  transport.onmessage = (message) => {
    if (!ended) inbound?.enqueue(message as AnyMessage);
  };
  transport.onclose = () => {
    if (ended) return;
    ended = true;
    inbound?.close();
  };
  const writable = new WritableStream<AnyMessage>({
    write: (message) => transport.send(message),
    close: () => transport.close(),
  });
  return { readable, writable };
}
