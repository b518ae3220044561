package dev.royaltykit

import dev.royaltykit.types.RoyaltyKitException
import org.junit.Assert.assertEquals
import org.junit.Assert.fail
import org.junit.Test
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.concurrent.thread

/** `WebhookReceiver.useSecrets`: a rotation on a live receiver (issue 43), with an injected `now`. */
class UseSecretsTest {
    private val a = "whsec_use_secrets_A_0123456789abcdef"
    private val b = "whsec_use_secrets_B_0123456789abcdef"
    private val t0 = 1_795_773_600L // the rotation
    private val body = """{"event":"ddex.delivery.failed","resource":{"type":"ddex_message","reference":"r1","url":"/api/v1/releases/r1"},"occurred_at":"2026-11-27T10:00:00Z"}""".toByteArray()

    /** What `rotateSecret` reveals: [b], with the previous secret valid for 300 s more. */
    private val rotated = revealedSecret("""{"data":{"reference":"wh_1","secret":"$b","previous_secret_valid_until":"2026-11-27T10:05:00Z"}}""".toByteArray())

    private fun WebhookReceiver.status(secret: String, at: Long, id: String) = receive(signWebhook(secret, body, at, id), body, at).status

    @Test
    fun bothSecretsVerifyDuringTheOverlapAndOnlyTheNewOneAfterIt() {
        assertEquals(t0 + 300, rotated.previousValidUntil)
        val handled = ArrayList<String>()
        WebhookReceiver(listOf(a), "org-1") { d -> handled += d.deliveryId }.use { rx ->
            assertEquals(200, rx.status(a, t0, "d-a-0"))
            assertEquals("not B yet", 401, rx.status(b, t0, "d-b-0"))

            rx.useSecrets(rotated.secrets(previous = a))
            assertEquals(200, rx.status(a, t0 + 1, "d-a-1"))
            assertEquals(200, rx.status(b, t0 + 1, "d-b-1"))
            assertEquals("A's last second", 200, rx.status(a, t0 + 300, "d-a-2"))
            // after previous_secret_valid_until: only B
            assertEquals(401, rx.status(a, t0 + 301, "d-a-3"))
            assertEquals(200, rx.status(b, t0 + 301, "d-b-3"))

            // plain strings too: B alone, which never expires
            rx.useSecrets(listOf(b))
            assertEquals(401, rx.status(a, t0 + 2, "d-a-4"))
            assertEquals(200, rx.status(b, t0 + 2, "d-b-4"))
        }
        assertEquals(listOf("d-a-0", "d-a-1", "d-b-1", "d-a-2", "d-b-3", "d-b-4"), handled)
    }

    @Test
    fun secretsTheConstructorRefusesAreRefusedAndTheReceiverKeepsItsOwn() {
        WebhookReceiver(listOf(a), "org-1") {}.use { rx ->
            for ((what, call) in listOf<Pair<String, () -> Unit>>(
                "no secret" to { rx.useSecrets(emptyList<WebhookSecret>()) },
                "an empty secret" to { rx.useSecrets(listOf("")) },
                "an empty one after a good one" to { rx.useSecrets(listOf(WebhookSecret(b), WebhookSecret(""))) },
            )) {
                try {
                    call()
                    fail("accepted $what")
                } catch (e: RoyaltyKitException.Webhook) {
                    assertEquals(what, "invalid_secret", e.code)
                }
            }
            assertEquals(200, rx.status(a, t0, "d-a"))
            assertEquals(401, rx.status(b, t0, "d-b"))
        }
    }

    @Test
    fun deliveriesOnOtherThreadsAreNeverRefusedWhileTheSecretsAreSwapped() {
        // A and B both verify in every list swapped in: no delivery may see a half-made or closed verifier.
        WebhookReceiver(listOf(a, b), "org-1") {}.use { rx ->
            val stop = AtomicBoolean(false)
            val started = CountDownLatch(4)
            val wrong = AtomicInteger()
            val seen = AtomicInteger()
            val threads = (0 until 4).map { n ->
                thread(name = "deliveries-$n") {
                    started.countDown()
                    var i = 0
                    while (!stop.get()) {
                        if (rx.status(if (i % 2 == 0) a else b, t0, "d-$n-${i++}") != 200) wrong.incrementAndGet()
                        seen.incrementAndGet()
                    }
                }
            }
            started.await()
            repeat(500) { i -> rx.useSecrets(if (i % 2 == 0) listOf(b, a) else listOf(a, b)) }
            stop.set(true)
            threads.forEach { it.join(20_000) }
            assertEquals("deliveries refused during the swaps (of ${seen.get()})", 0, wrong.get())
        }
    }
}
