package io.sparkmirror.recordpath;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The driver's end of the record path's reports when writers run on a cluster's executors: one TCP server per
 * driver JVM, one connection per executor JVM and query generation ({@link RemoteChannel} is the other end).
 *
 * <p>Lines of JSON. The executor opens with {@code {"channel", "token"}} and is told {@code {"open"}}; then it
 * sends {@code {"type": "report", "summaries"}} and, when told {@code {"type": "stop", "timeout_ms"}}, stops its
 * writers, reports what they got acknowledged and answers {@code {"type": "stopped", "busy"}}. A query with a lease
 * adds {@code "lease_ms"} (what is left of it) to the {@code {"open"}} answer and forwards each renewal as
 * {@code {"type": "lease", "valid_ms"}}: the executor times both from when it reads them. The token (random,
 * per driver, sent to the executors inside the writer's spec) keeps anyone else who reaches the port from
 * reporting records as replicated.
 */
final class ChannelServer {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, Object>> MESSAGE = new TypeReference<Map<String, Object>>() { };
    private static ChannelServer instance;

    private final ServerSocket server;
    private final String token;
    private final String advertisedHost;

    private ChannelServer(String bindHost, String advertisedHost) throws IOException {
        this.server = new ServerSocket();
        this.server.bind(new InetSocketAddress(InetAddress.getByName(bindHost), 0));
        byte[] secret = new byte[24];
        new SecureRandom().nextBytes(secret);
        this.token = HexFormat.of().formatHex(secret);
        this.advertisedHost = advertisedHost;
        Thread accepting = new Thread(this::accept, "sparkmirror-channel-server");
        accepting.setDaemon(true);
        accepting.start();
    }

    /** The endpoint executors connect to (host, port, token), the server started on first use. */
    static synchronized Map<String, Object> endpoint(String bindHost, String advertisedHost) throws IOException {
        if (instance == null) {
            instance = new ChannelServer(bindHost, advertisedHost);
        }
        Map<String, Object> out = new HashMap<>();
        out.put("host", instance.advertisedHost);
        out.put("port", instance.server.getLocalPort());
        out.put("token", instance.token);
        return out;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                Thread serving = new Thread(new Connection(socket), "sparkmirror-channel-" + socket.getPort());
                serving.setDaemon(true);
                serving.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    /** One executor JVM's writers of one query generation, as the driver's {@link FlowChannel} sees them. */
    final class Connection implements Runnable {
        private final Socket socket;
        private Writer out;
        private volatile CountDownLatch stopped = new CountDownLatch(1);
        private volatile int busy = -1;  // writers the executor could not stop in time; -1 until it answered

        Connection(Socket socket) {
            this.socket = socket;
        }

        @Override
        public void run() {
            FlowChannel channel = null;
            try (Socket s = socket) {
                s.setTcpNoDelay(true);
                BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
                out = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8);
                String helloLine = in.readLine();
                if (helloLine == null) {
                    return;
                }
                Map<String, Object> hello = JSON.readValue(helloLine, MESSAGE);
                channel = FlowChannel.lookup(String.valueOf(hello.get("channel")));
                boolean open = sameToken(String.valueOf(hello.get("token"))) && channel != null && !channel.isClosed();
                if (!open) {
                    send(Map.of("open", false));
                    channel = null;
                    return;
                }
                synchronized (this) {  // a renewal forwarded once attached waits for the answer, so it follows it
                    channel.attach(this);
                    send(channel.opening());
                }
                if (channel.isClosed()) {  // closed since the executor's hello: the closer may have missed it
                    stop(0);
                }
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    Map<String, Object> message = JSON.readValue(line, MESSAGE);
                    if ("report".equals(message.get("type"))) {
                        @SuppressWarnings("unchecked")
                        List<Map<String, Object>> summaries = (List<Map<String, Object>>) message.get("summaries");
                        channel.offer(summaries);
                    } else if ("stopped".equals(message.get("type"))) {
                        busy = ((Number) message.get("busy")).intValue();
                        stopped.countDown();
                    }
                }
            } catch (IOException e) {
                // the executor is gone: its task fails, Spark retries it, and what it did not report is read again
            } finally {
                if (channel != null) {
                    channel.detach(this);
                }
                stopped.countDown();
            }
        }

        private boolean sameToken(String given) {
            return MessageDigest.isEqual(token.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8));
        }

        private synchronized void send(Map<String, Object> message) throws IOException {
            out.write(JSON.writeValueAsString(message));
            out.write('\n');
            out.flush();
        }

        /** Ask the executor to stop its writers, report and answer; false when it cannot be told. */
        boolean stop(long timeoutMs) {
            try {
                send(Map.of("type", "stop", "timeout_ms", timeoutMs));
                return true;
            } catch (IOException e) {
                return false;
            }
        }

        /** Forward a renewal of the lease (an executor that cannot be told lets its lease expire on its own). */
        void renew(long validMs) {
            try {
                send(Map.of("type", "lease", "valid_ms", validMs));
            } catch (IOException e) {
                // the connection is lost: the executor's writers fail when they notice
            }
        }

        /** Writers of the executor still busy once it answered, or 1 when it did not answer in time. */
        int awaitStopped(long timeoutMs) {
            try {
                stopped.await(timeoutMs, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return busy >= 0 ? busy : (socket.isClosed() ? 0 : 1);
        }

        void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }
}
