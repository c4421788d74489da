package io.sparkmirror.recordpath;

import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.Filter;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.filter.AbstractFilter;

/**
 * Spark logs a failed task several times over, each with the whole stack (the executor's "Exception in task", the
 * scheduler's "Lost task" and "aborting job", the query's end): for a record the target refuses, thousands of
 * lines over a few retries. The writer says it in one line naming the record and the fix ({@link #say}), so
 * this JVM-wide filter drops Spark's events about a {@link RecordPathException}. Other failures log as before.
 */
final class QuietFailures extends AbstractFilter {
    private static final AtomicBoolean INSTALLED = new AtomicBoolean();
    private static final String OURS = RecordPathException.class.getName();
    private static final org.slf4j.Logger WRITER_LOG = org.slf4j.LoggerFactory.getLogger(MirrorWriter.class);

    private QuietFailures() {
        super(Filter.Result.DENY, Filter.Result.NEUTRAL);
    }

    /** Once per JVM (the driver, each executor), into the running logging configuration: on every logger
     * configuration, root included, since log4j2 hands a whole event (with its exception) only to those. */
    static void install() {
        if (!INSTALLED.compareAndSet(false, true)) {
            return;
        }
        try {
            LoggerContext context = (LoggerContext) LogManager.getContext(false);
            Configuration config = context.getConfiguration();
            QuietFailures filter = new QuietFailures();
            config.getRootLogger().addFilter(filter);
            for (LoggerConfig logger : config.getLoggers().values()) {
                if (logger != config.getRootLogger()) {
                    logger.addFilter(filter);
                }
            }
            context.updateLoggers();
        } catch (RuntimeException | LinkageError e) {  // another logging backend: Spark's lines stay
            org.slf4j.LoggerFactory.getLogger(QuietFailures.class).debug("log filter not installed", e);
        }
    }

    /** One line per failed task for the record path's own failures, in the writer's log; the stack at DEBUG. */
    static void say(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof RecordPathException) {
                WRITER_LOG.warn("flow task failed: {}", t.getMessage());
                WRITER_LOG.debug("record path failure", error);
                return;
            }
        }
    }

    @Override
    public Filter.Result filter(LogEvent event) {
        if (event.getLoggerName() != null && event.getLoggerName().startsWith("io.sparkmirror.")) {
            return Filter.Result.NEUTRAL;
        }
        for (Throwable t = event.getThrown(); t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof RecordPathException || OURS.equals(t.getClass().getName())) {
                return onMatch;  // by name too: an executor's exception may come back through another loader
            }
        }
        String text = event.getMessage() == null ? null : event.getMessage().getFormattedMessage();
        return text != null && text.contains(OURS) ? onMatch : onMismatch;
    }
}
