package io.sparkmirror.recordpath;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Topic ids of the source cluster, asked of it at most every {@link #FRESH_MS} per topic and JVM.
 *
 * <p>A topic deleted and re-created under a running query keeps its name, and the reader goes on at the old
 * offsets, now the new topic's records: the writer compares the id the query was planned with against the
 * cluster's before it writes a partition's first record and then every {@link #FRESH_MS}, so a re-created
 * topic fails the task before its records are written out of order. A retried task reads its range again from
 * its start, where the records below what its first attempt wrote are skipped: before the first of them the
 * cluster is asked at once ({@link #checkNow}), as they may be the new topic's (a task failed on the re-created
 * topic's shorter log and Spark retried it: its first records were skipped as written, and lost).
 *
 * <p>The id asked is up to {@link #FRESH_MS} old: a topic deleted, re-created and read again within that time can
 * have its first records written at the old positions; the flow's topic refresh then sees the new id and copies the
 * new topic from its start (records twice, none lost).
 */
final class SourceTopics {
    static final long FRESH_MS = 500;
    private static final long ASK_TIMEOUT_MS = 5_000;
    private static final ConcurrentHashMap<Map<String, String>, SourceTopics> CLUSTERS = new ConcurrentHashMap<>();

    private final Admin admin;
    private final ConcurrentHashMap<String, long[]> askedAt = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, String> ids = new ConcurrentHashMap<>();

    private SourceTopics(Map<String, String> config) {
        this.admin = Admin.create(new HashMap<>(config));
    }

    static SourceTopics of(Map<String, String> config) {
        return CLUSTERS.computeIfAbsent(config, SourceTopics::new);
    }

    /** Fail before writing when the source topic is not the one the query was planned with (re-created).
     * {@code admin}: the source cluster's admin settings; {@code plannedIds}: topic -> its id when planned. */
    static void check(Map<String, String> admin, Map<String, String> plannedIds, String topic) {
        check(admin, plannedIds, topic, FRESH_MS);
    }

    /** {@link #check}, with the cluster asked now rather than an id asked in the last {@link #FRESH_MS}. */
    static void checkNow(Map<String, String> admin, Map<String, String> plannedIds, String topic) {
        check(admin, plannedIds, topic, 0);
    }

    private static void check(Map<String, String> admin, Map<String, String> plannedIds, String topic, long freshMs) {
        String planned = plannedIds.get(topic);
        if (planned == null || admin == null) {
            return;
        }
        String now = of(admin).idOf(topic, freshMs);
        if (now != null && !now.isEmpty() && !now.equals(planned)) {
            throw new RecordPathException("source topic '" + topic + "' was deleted and re-created (topic id "
                + planned + ", now " + now + "): its records are not written at the old positions; the flow "
                + "restarts it from its start");
        }
    }

    /** The topic's id ("" if it does not exist), asked at most {@code freshMs} ago, or null when the cluster did
     * not answer in time. */
    String idOf(String topic, long freshMs) {
        long now = System.currentTimeMillis();
        long[] at = askedAt.computeIfAbsent(topic, k -> new long[] {Long.MIN_VALUE});
        synchronized (at) {
            if (now - at[0] < freshMs && ids.containsKey(topic)) {
                return ids.get(topic);
            }
            String id = ask(topic);
            if (id != null) {
                ids.put(topic, id);
                at[0] = now;
            }
            return id;
        }
    }

    private String ask(String topic) {
        try {
            return admin.describeTopics(List.of(topic)).allTopicNames().get(ASK_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .get(topic).topicId().toString();
        } catch (ExecutionException e) {
            return e.getCause() instanceof UnknownTopicOrPartitionException ? "" : null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (java.util.concurrent.TimeoutException e) {
            return null;  // not a verdict: the next record asks again
        }
    }
}
