package io.sparkmirror.recordpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.impl.Log4jLogEvent;
import org.apache.logging.log4j.message.SimpleMessage;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The JVM-wide filter, as installed into the running log4j configuration. */
class QuietFailuresTest {
    private static Filter filter;

    @BeforeAll
    static void install() {
        QuietFailures.install();
        QuietFailures.install();  // once per JVM
        // log4j2 hands whole events (with their exceptions) to the filters of logger configurations, root's for
        // Spark's loggers: that is where the filter must be.
        filter = ((LoggerContext) LogManager.getContext(false)).getConfiguration().getRootLogger().getFilter();
    }

    private static LogEvent event(String logger, String message, Throwable thrown) {
        return Log4jLogEvent.newBuilder().setLoggerName(logger).setLevel(Level.ERROR)
            .setMessage(new SimpleMessage(message)).setThrown(thrown).build();
    }

    @Test
    void sparksLinesAboutARecordPathFailureAreDropped() {
        RecordPathException ours = new RecordPathException("record t-0@1 is too large");
        assertEquals(Filter.Result.DENY, filter.filter(event("org.apache.spark.executor.Executor", "Exception in task",
                                                             ours)));
        assertEquals(Filter.Result.DENY, filter.filter(event("org.apache.spark.scheduler.TaskSetManager", "Lost task",
                                                             new RuntimeException("wrapped", ours))));
        assertEquals(Filter.Result.DENY, filter.filter(event("org.apache.spark.scheduler.TaskSetManager",
            "Lost task 0.0: io.sparkmirror.recordpath.RecordPathException: record t-0@1 is too large", null)));
    }

    @Test
    void theRootLoggerConfigurationDropsSuchAnEventBeforeItsAppenders() {
        LoggerConfig root = ((LoggerContext) LogManager.getContext(false)).getConfiguration().getRootLogger();
        assertTrue(root.isFiltered(event("org.apache.spark.util.Utils", "Aborting task",
                                         new RuntimeException("wrapped", new RecordPathException("x")))));
        assertFalse(root.isFiltered(event("org.apache.spark.util.Utils", "Aborting task", new RuntimeException("x"))));
    }

    @Test
    void theWritersOwnLinesAndOtherFailuresStay() {
        assertEquals(Filter.Result.NEUTRAL, filter.filter(event("io.sparkmirror.recordpath.MirrorWriter",
            "record path failure", new RecordPathException("x"))));
        assertEquals(Filter.Result.NEUTRAL, filter.filter(event("org.apache.spark.executor.Executor",
            "Exception in task", new IllegalStateException("other"))));
    }
}
