package io.sparkmirror.recordpath;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * An executor's end of its query's {@link FlowChannel} (the driver's end is {@link ChannelServer}): one
 * connection per executor JVM and query generation, shared by the writers of its tasks.
 *
 * <p>Reports travel in order over the one connection, so a partition's summaries reach the driver in the order
 * they were taken, as they do in local mode. A report that cannot be sent fails the writer's task: Spark retries
 * it, and the records it did not report are read again (duplicates, never a loss).
 *
 * <p>A query with a lease: the driver says what is left of it when the connection opens and forwards each renewal;
 * this JVM times them with its own clock from when it reads them, so a connection silent for longer than the lease
 * lets the lease expire here too, and the writers here send nothing.
 */
final class RemoteChannel extends ReportChannel {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, Object>> MESSAGE = new TypeReference<Map<String, Object>>() { };
    private static final int CONNECT_TIMEOUT_MS = 10_000;
    private static final ConcurrentHashMap<String, RemoteChannel> CHANNELS = new ConcurrentHashMap<>();
    private static final ScheduledExecutorService REPORTER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sparkmirror-remote-reporter");
        t.setDaemon(true);
        return t;
    });

    private final String id;
    private final String driver;
    private final Socket socket;
    private final Writer out;
    private final ScheduledFuture<?> reporting;
    private volatile boolean stoppedByDriver;  // a stop, not a lost connection: its writers did nothing wrong
    private volatile String broken;  // why the connection to the driver is lost; null while it works

    private RemoteChannel(String id, String host, int port, Socket socket, BufferedReader in, long reportIntervalMs,
                          Lease lease) throws IOException {
        super(lease);
        this.id = id;
        this.driver = host + ":" + port;
        this.socket = socket;
        this.out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
        Thread listening = new Thread(() -> listen(in), "sparkmirror-remote-channel");
        listening.setDaemon(true);
        listening.start();
        this.reporting = reportIntervalMs <= 0 ? null : REPORTER.scheduleWithFixedDelay(
            this::reportOpenWriters, reportIntervalMs, reportIntervalMs, TimeUnit.MILLISECONDS);
    }

    /** This JVM's connection for query generation {@code id}; null when the driver says the query is stopping. */
    static synchronized ReportChannel connect(String id, String host, int port, String token, long reportIntervalMs) {
        RemoteChannel existing = CHANNELS.get(id);
        if (existing != null && existing.broken == null) {
            return existing;
        }
        Socket socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MS);
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            Writer hello = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
            hello.write(JSON.writeValueAsString(Map.of("channel", id, "token", token)) + "\n");
            hello.flush();
            String line = in.readLine();
            Map<String, Object> answer = line == null ? Map.of() : JSON.readValue(line, MESSAGE);
            if (!Boolean.TRUE.equals(answer.get("open"))) {
                socket.close();
                return null;
            }
            Number leaseMs = (Number) answer.get("lease_ms");  // what is left of the query's lease; none without one
            Lease lease = leaseMs == null ? Lease.NONE : Lease.validFor(leaseMs.longValue());
            RemoteChannel channel = new RemoteChannel(id, host, port, socket, in, reportIntervalMs, lease);
            CHANNELS.put(id, channel);
            return channel;
        } catch (IOException e) {
            try {
                socket.close();
            } catch (IOException ignored) {
                // failing anyway
            }
            throw new RecordPathException("cannot reach the sparkmirror driver at " + host + ":" + port + " to report "
                + "replicated records (" + e + "): executors must reach the driver's host (spark.driver.host) on "
                + "any port, as Spark itself requires");
        }
    }

    @Override
    void offer(List<Map<String, Object>> summaries) {
        String message;
        try {
            message = JSON.writeValueAsString(Map.of("type", "report", "summaries", summaries)) + "\n";
        } catch (IOException e) {
            throw new RecordPathException("cannot encode a report: " + e);
        }
        synchronized (out) {
            if (broken != null) {
                throw lost();
            }
            try {
                out.write(message);
                out.flush();
            } catch (IOException e) {
                breakOff("sending a report failed: " + e);
                throw lost();
            }
        }
    }

    private RecordPathException lost() {
        return new RecordPathException("lost the connection to the sparkmirror driver at " + driver + " (" + broken
            + "): the task fails and Spark retries it; the records it did not report are written again");
    }

    /** The driver's messages: a renewal of the lease, a stop, or the end of the connection. */
    private void listen(BufferedReader in) {
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                Map<String, Object> message = JSON.readValue(line, MESSAGE);
                if ("lease".equals(message.get("type"))) {
                    lease.renew(((Number) message.get("valid_ms")).longValue());
                } else if ("stop".equals(message.get("type"))) {
                    stopWriters(((Number) message.get("timeout_ms")).longValue());
                }
            }
            breakOff("the driver closed the connection");
        } catch (IOException e) {
            breakOff("reading from the driver failed: " + e);
        }
    }

    /** As {@link FlowChannel#close}, for this JVM's writers; then tell the driver how many are still busy. */
    private void stopWriters(long timeoutMs) throws IOException {
        stoppedByDriver = true;
        closed = true;
        long deadline = System.currentTimeMillis() + timeoutMs;
        for (MirrorWriter writer : open) {
            writer.stopWriting();
        }
        int busy = 0;
        for (MirrorWriter writer : open) {
            writer.awaitAcknowledged(Math.max(0, deadline - System.currentTimeMillis()));
            try {
                writer.reportAcknowledged();
            } catch (RecordPathException e) {
                return;  // the connection is gone: the driver stops waiting when it sees that
            }
            busy += writer.allAcknowledged() ? 0 : 1;
        }
        synchronized (out) {
            out.write(JSON.writeValueAsString(Map.of("type", "stopped", "busy", busy)) + "\n");
            out.flush();
        }
    }

    private void reportOpenWriters() {
        for (MirrorWriter writer : open) {
            try {
                writer.reportAcknowledged();
            } catch (RecordPathException e) {
                writer.fail(e.getMessage());  // its task fails at its next record or at its end
            }
        }
    }

    /** The connection is lost: writers write nothing more and their tasks fail; a new task reconnects. */
    private void breakOff(String why) {
        if (broken == null) {
            broken = why;
        }
        closed = true;
        for (MirrorWriter writer : open) {
            writer.stopWriting();
            if (!stoppedByDriver) {
                writer.fail("lost the connection to the sparkmirror driver at " + driver + " (" + why + ")");
            }
        }
        if (reporting != null) {
            reporting.cancel(false);
        }
        CHANNELS.remove(id, this);
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
