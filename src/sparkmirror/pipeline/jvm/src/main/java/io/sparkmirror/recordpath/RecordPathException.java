package io.sparkmirror.recordpath;

/** A record could not be replicated; the message names the record, the cluster and the fix. */
public final class RecordPathException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RecordPathException(String message) {
        super(message);
    }
}
