package io.sparkmirror.recordpath;

import static io.sparkmirror.recordpath.LeaseTest.DONE_MS;
import static io.sparkmirror.recordpath.LeaseTest.eventually;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The lease across JVMs: an executor's {@link RemoteChannel} connected to the driver's {@link ChannelServer}, both in
 * this JVM (a writer here would use the driver's channel itself, so the executor's end is made directly).
 */
class RemoteChannelLeaseTest {
    private final String channelId = "remote-lease-" + UUID.randomUUID();

    private RemoteChannel executor() throws Exception {
        Map<String, Object> driver = ChannelServer.endpoint("127.0.0.1", "127.0.0.1");
        ReportChannel channel = RemoteChannel.connect(channelId, (String) driver.get("host"),
                                                      ((Number) driver.get("port")).intValue(),
                                                      (String) driver.get("token"), 0);
        assertNotNull(channel, "the driver let the executor in");
        return (RemoteChannel) channel;
    }

    @Test
    void anExecutorsLeaseExpiresWhenTheDriverFallsSilentAndEachForwardedRenewalSetsItAnew() throws Exception {
        FlowChannel driver = FlowChannel.create(channelId, 0, 60_000);
        try {
            RemoteChannel executor = executor();
            assertFalse(executor.leaseExpired(), "valid for what is left of the driver's lease");
            driver.renew(300);
            assertTrue(eventually(executor::leaseExpired, DONE_MS), "no renewal for longer than the lease: expired");
            driver.renew(60_000);
            assertTrue(eventually(() -> !executor.leaseExpired(), DONE_MS), "the renewal reached the executor");
            driver.renew(0);
            assertTrue(eventually(executor::leaseExpired, DONE_MS), "the executor times what it is told");
        } finally {
            driver.release();
        }
    }

    @Test
    void anExecutorJoiningAfterTheLeaseExpiredStartsExpired() throws Exception {
        FlowChannel driver = FlowChannel.create(channelId, 0, 60_000);
        try {
            driver.renew(0);
            RemoteChannel executor = executor();
            assertTrue(executor.leaseExpired());
            driver.renew(60_000);
            assertTrue(eventually(() -> !executor.leaseExpired(), DONE_MS));
        } finally {
            driver.release();
        }
    }

    @Test
    void withoutALeaseAnExecutorNeverWaits() throws Exception {
        FlowChannel driver = FlowChannel.create(channelId, 0);
        try {
            RemoteChannel executor = executor();
            driver.renew(0);
            assertFalse(executor.leaseExpired());
        } finally {
            driver.release();
        }
    }
}
