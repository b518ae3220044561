import dev.royaltykit.DedupWindow;
import dev.royaltykit.RateBudget;
import dev.royaltykit.RoyaltyKitKt;
import dev.royaltykit.Session;
import dev.royaltykit.WebhookSecret;
import dev.royaltykit.WebhookVerifier;
import dev.royaltykit.types.RoyaltyKitException;
import dev.royaltykit.types.VerifiedWebhook;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** The jar from plain Java (javac, no Kotlin): objects, records, the exception and its code. */
public final class JavaUse {
    public static void main(String[] args) throws RoyaltyKitException {
        byte[] body = "{\"event\":\"e\",\"resource\":{\"type\":\"t\",\"reference\":\"r\",\"url\":\"/u\"},\"occurred_at\":\"2026-11-22T00:00:00Z\"}"
            .getBytes(StandardCharsets.UTF_8);
        Map<String, String> headers = RoyaltyKitKt.signWebhook("s", body, 1000L, "dlv_java");
        try (WebhookVerifier verifier = new WebhookVerifier(List.of("s"), null, null, List.of())) {
            VerifiedWebhook v = RoyaltyKitKt.verify(verifier, headers, body, 1000L);
            check(v.getDeliveryId().equals("dlv_java"), "delivery id");
            try {
                RoyaltyKitKt.verify(verifier, headers, body, 100000L);
                check(false, "a stale delivery was accepted");
            } catch (RoyaltyKitException e) {
                check(RoyaltyKitKt.getCode(e).equals("timestamp_too_old"), "code " + RoyaltyKitKt.getCode(e));
            }
        }
        // routing by event name from Java: handlers are Function1 lambdas returning Unit.INSTANCE
        java.util.List<String> ran = new java.util.ArrayList<>();
        dev.royaltykit.EventRouter router = new dev.royaltykit.EventRouter()
            .on(dev.royaltykit.EventNames.DDEX_DELIVERY_FAILED, d -> { ran.add("failed"); return kotlin.Unit.INSTANCE; })
            .otherwise(d -> { ran.add("otherwise " + d.getEvent().getName()); return kotlin.Unit.INSTANCE; });
        try (WebhookVerifier verifier = new WebhookVerifier(List.of("s"), null, null, List.of())) {
            router.invoke(RoyaltyKitKt.verify(verifier, headers, body, 1000L));
        }
        check(ran.equals(List.of("otherwise e")), "the router from Java: " + ran);
        try (DedupWindow w = new DedupWindow(10L, 60L, null)) {
            check(w.checkAndInsert("k", 1000L) && !w.checkAndInsert("k", 1000L), "dedup");
            check(w.size() == 1L && w.capacity() == 10L, "size and capacity from Java");
        }
        try (Session s = new Session((RateBudget) null)) {
            check(s.version() == 0L && s.exchanges() == 0L && !s.hasToken(), "a session from Java");
        }
        WebhookSecret rotated = new WebhookSecret("s", "2026-11-27T03:05:06Z");
        check(rotated.getValidUntil() == java.time.Instant.parse("2026-11-27T03:05:06Z").getEpochSecond(), "validUntil from ISO text");
        try {
            new WebhookSecret("s", Double.NaN);
            check(false, "a NaN validUntil was accepted");
        } catch (RoyaltyKitException e) {
            check(RoyaltyKitKt.getCode(e).equals("invalid_argument"), "NaN refused: " + RoyaltyKitKt.getCode(e));
        }
        // a rotation's reveal-once secret from Java: secrets() and secrets(previous), printing hides it
        dev.royaltykit.RevealedSecret revealed = RoyaltyKitKt.revealedSecret(
            "{\"data\":{\"reference\":\"wh_1\",\"secret\":\"whsec_java\",\"previous_secret_valid_until\":2000}}".getBytes(StandardCharsets.UTF_8));
        check(revealed.getSecret().getSecret().equals("whsec_java") && revealed.getPreviousValidUntil() == 2000L, "revealed secret");
        check(revealed.secrets().size() == 1 && revealed.secrets("whsec_old").size() == 2, "secrets() and secrets(previous)");
        check(!revealed.toString().contains("whsec_java") && "wh_1".equals(revealed.getReference()), "printing hides the secret");
        // delivery recovery's store lookups from Java: a built-in store, and a lambda as DeliveryStates
        try (dev.royaltykit.InMemoryDedupStore store = new dev.royaltykit.InMemoryDedupStore()) {
            dev.royaltykit.DeliveryStates states = store;
            check(states.state("k") == dev.royaltykit.types.ClaimState.NEW, "state of an unseen key");
            check(store.claim("k") == dev.royaltykit.types.ClaimState.NEW, "the lookup claimed nothing");
            check(states.state("k") == dev.royaltykit.types.ClaimState.IN_PROGRESS, "state of a claimed key");
        }
        dev.royaltykit.DeliveryStates mine = key -> dev.royaltykit.types.ClaimState.DONE;
        check(mine.state("k") == dev.royaltykit.types.ClaimState.DONE, "a lambda store");
        System.out.println("java: 1 passed, 0 failed");
    }

    private static void check(boolean ok, String what) {
        if (!ok) throw new AssertionError(what);
    }
}
