// A real STOMP client for api/stomp_node_test.go: @stomp/stompjs (the library web
// clients use) over the `ws` package, since Node 20 has no global WebSocket.
//
//   node client.mjs <ws url> <access token> <project key>
//
// It connects, subscribes to the project's board topic with a receipt, prints
// "READY <version> <heart-beat>" once the receipt arrives, then prints
// "MESSAGE <body>" for the first message and disconnects. Exit 0 on success, 1 on a
// STOMP or socket error, 2 when nothing arrives within 30 seconds.
import { Client } from '@stomp/stompjs';
import WebSocket from 'ws';

const [url, token, projectKey] = process.argv.slice(2);
if (!url || !token || !projectKey) {
  console.error('usage: node client.mjs <ws url> <access token> <project key>');
  process.exit(64);
}

const timer = setTimeout(() => {
  console.error('timeout: no message within 30 s');
  process.exit(2);
}, 30_000);

const client = new Client({
  webSocketFactory: () => new WebSocket(url, ['v12.stomp', 'v11.stomp', 'v10.stomp']),
  connectHeaders: { Authorization: `Bearer ${token}` },
  heartbeatIncoming: 10000,
  heartbeatOutgoing: 10000,
  reconnectDelay: 0,
  debug: () => {},
});

client.onConnect = (frame) => {
  const receipt = 'sub-board';
  client.watchForReceipt(receipt, () => {
    console.log(`READY ${frame.headers.version} ${frame.headers['heart-beat']}`);
  });
  client.subscribe(`/topic/projects/${projectKey}`, async (message) => {
    console.log(`MESSAGE ${message.body}`);
    clearTimeout(timer);
    await client.deactivate();
    process.exit(0);
  }, { receipt });
};
client.onStompError = (frame) => {
  console.log(`ERROR ${frame.headers.message}`);
  process.exit(1);
};
client.onWebSocketError = (event) => {
  console.error(`socket error: ${event.message ?? event}`);
  process.exit(1);
};
client.activate();
