package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class SkipAheadTest {
    @Test
    void theReaderTakesWhatItsWriterSaidOnceTheFurthestPerPartition() {
        SkipAhead.clear();
        assertNull(SkipAhead.take());
        SkipAhead.written("t", 0, 500);
        SkipAhead.written("t", 0, 400);  // an earlier report's offset does not move it back
        SkipAhead.written("t", 1, 7);
        assertEquals(Map.of(new TopicPartition("t", 0), 500L, new TopicPartition("t", 1), 7L), SkipAhead.take());
        assertNull(SkipAhead.take(), "taken once");
    }

    @Test
    void anotherTasksThreadAndALaterTaskOfTheSameThreadSeeNothing() throws Exception {
        SkipAhead.written("t", 0, 500);
        AtomicReference<Map<TopicPartition, Long>> other = new AtomicReference<>(Map.of());
        Thread thread = new Thread(() -> other.set(SkipAhead.take()));
        thread.start();
        thread.join();
        assertNull(other.get());
        SkipAhead.clear();  // the next task's reader starts in this thread
        assertNull(SkipAhead.take());
    }
}
