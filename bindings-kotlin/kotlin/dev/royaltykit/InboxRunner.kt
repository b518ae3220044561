// The one inbox worker loop of this binding: performs the steps of the core's InboxWorker with a
// store's operations (JdbcInbox: transactional; RedisInbox: not); decides nothing itself.
package dev.royaltykit

import dev.royaltykit.client.interruption
import dev.royaltykit.client.seedOf
import dev.royaltykit.types.InboxEntry
import dev.royaltykit.types.InboxOutcome
import dev.royaltykit.types.InboxStep
import dev.royaltykit.types.WebhookEvent
import java.time.Clock
import java.time.Instant
import java.util.concurrent.CancellationException
import java.util.concurrent.atomic.AtomicBoolean
import java.util.logging.Level

/**
 * An inbox's store operations, as the worker loop ([work]) performs them: each is one of the core's
 * statements or commands. [T] is the handler's transaction (a JDBC connection); a store that is not
 * [transactional] is never asked to [begin], [commit] or [rollBackAndClose], and its [handle] and
 * [markDone] get null.
 */
internal abstract class InboxRunner<T : Any>(
    private val transactional: Boolean,
    private val clock: Clock,
    private val onError: ((Exception, InboxEntry) -> Unit)?,
) {
    /** The store as logs name it (`inbox <table>`, `Redis inbox <prefix>`). */
    abstract val description: String

    /** The claim at [now] (Unix seconds): the entry, or null when nothing is due. */
    abstract fun claim(now: Long): InboxEntry?

    /** Opens the handler's transaction and returns it (transactional stores only). */
    open fun begin(): T = throw UnsupportedOperationException("$description has no transactions")

    /** Runs the user's handler with [event] (and [tx], the open transaction, if any). */
    abstract fun handle(event: WebhookEvent, tx: T?)

    /** Marks [key] done by the claim that counted [attempts], at [now] (inside [tx], if any). */
    abstract fun markDone(tx: T?, key: String, attempts: Long, now: Long): Boolean

    /** Commits [tx] (a failure throws; the loop then rolls it back). */
    open fun commit(tx: T) {}

    /** Gives [tx] back after its commit. */
    open fun release(tx: T) {}

    /** Rolls [tx] back and gives it back, a failed rollback too. */
    open fun rollBackAndClose(tx: T) {}

    /** Records the failed attempt (autocommit, after any rollback). */
    abstract fun settle(key: String, attempts: Long, poison: Boolean, retryAt: Long, error: String)

    private fun seconds(t: Instant): Double = t.epochSecond + t.nano / 1e9

    /** A store call's value, or null when it threw (logged); an interruption is thrown as is. */
    private class Done<V>(val value: V)

    private inline fun <V> store(what: String, call: () -> V): Done<V>? = try {
        Done(call())
    } catch (e: Exception) {
        if (interrupting(e)) throw e
        log.log(Level.SEVERE, "royaltykit: $description failed on $what: trying again after the backoff", e)
        null
    }

    private fun interrupting(e: Throwable): Boolean = e is CancellationException || interruption(e)

    /** Waits [seconds], or until [stop] is set (false then). */
    private fun pause(seconds: Double, stop: AtomicBoolean): Boolean {
        val deadline = System.nanoTime() + (seconds.coerceIn(0.0, 86_400.0) * 1e9).toLong()
        while (!stop.get()) {
            val left = deadline - System.nanoTime()
            if (left <= 0) return true
            Thread.sleep((left / 1_000_000 + 1).coerceAtMost(50))
        }
        return false
    }

    /**
     * Gives the handler's [failure] to `onError` (none: logged, WARNING). An exception `onError`
     * throws is logged and changes nothing (the attempt still fails: rolled back, settled), as in
     * Python and Node; an interruption it throws stops the worker, as one the handler throws does.
     */
    private fun reportHandlerFailure(failure: Exception, entry: InboxEntry) {
        val hook = onError
        if (hook == null) {
            log.log(Level.WARNING, "royaltykit: inbox handler failed for ${entry.deliveryId} (attempt ${entry.attempts})", failure)
            return
        }
        try {
            hook(failure, entry)
        } catch (e: Exception) {
            if (interrupting(e)) throw e
            log.log(Level.SEVERE, "royaltykit: onError threw for inbox entry ${entry.deliveryId}", e)
        }
    }

    /** Performs the steps of the core's worker until [stop], drained or an interruption; every decision is the core's. */
    fun work(stop: AtomicBoolean, maxAttempts: Int?, pollSeconds: Double?, seed: Long?, drain: Boolean): InboxReport =
        InboxWorker(maxAttempts?.toLong(), pollSeconds, transactional, drain, seed?.let(::seedOf)).use { w ->
            val held = Held<T>()
            try {
                var step = w.next()
                while (true) {
                    if (step is InboxStep.Claim && Thread.interrupted()) throw InterruptedException("the inbox worker was interrupted")
                    if (step is InboxStep.Drained || (step is InboxStep.Claim || step is InboxStep.Idle) && stop.get()) break
                    val outcome = perform(step, held, stop) ?: break
                    step = w.report(outcome, seconds(held.now ?: clock.instant()))
                }
                InboxReport(w.processed(), w.retried(), w.poisoned())
            } finally {
                // an interruption or an Error thrown out of the loop: the transaction must not stay open
                held.tx?.let { rollBackAndClose(it) }
            }
        }

    /** One run's open transaction, and the instant of the claim just performed (its lease and the backoff start there). */
    private class Held<T : Any>(var tx: T? = null, var now: Instant? = null)

    /** Performs [step] (the store's call or the handler's); what became of it, or null when [stop] ended the wait. */
    private fun perform(step: InboxStep, held: Held<T>, stop: AtomicBoolean): InboxOutcome? {
        held.now = null
        return when (step) {
            is InboxStep.Claim -> {
                val t = clock.instant().also { held.now = it }
                answer(store("claim") { claim(t.epochSecond) }) { InboxOutcome.Claimed(it) }
            }
            is InboxStep.Idle -> if (pause(step.seconds, stop)) InboxOutcome.Done else null
            is InboxStep.Drained -> null
            is InboxStep.Begin -> answer(store("begin") { begin() }) { held.tx = it; InboxOutcome.Done }
            is InboxStep.RunHandler -> handled(step.entry, held.tx)
            is InboxStep.MarkDone -> {
                check(!transactional || held.tx != null) { "the worker marks inside a transaction" }
                val open = held.tx
                answer(store("markDone") { markDone(open, step.key, step.attempts.toLong(), clock.instant().epochSecond) }) { InboxOutcome.Marked(it) }
            }
            is InboxStep.Commit -> {
                val c = checkNotNull(held.tx) { "the worker commits a transaction" }
                // a failed commit: the machine asks for the rollback next, which closes it
                answer(store("commit") { commit(c) }) { held.tx = null; release(c); InboxOutcome.Done }
            }
            is InboxStep.Rollback -> {
                held.tx?.let { rollBackAndClose(it) }
                held.tx = null
                InboxOutcome.Done
            }
            is InboxStep.Settle -> answer(store("settle") { settle(step.key, step.attempts.toLong(), step.poison, step.retryAt, step.error) }) { InboxOutcome.Done }
        }
    }

    /** A store call's answer ([store]'s, null when it failed) as the worker's outcome. */
    private inline fun <V> answer(done: Done<V>?, of: (V) -> InboxOutcome): InboxOutcome =
        if (done == null) InboxOutcome.Failed("the store could not be reached") else of(done.value)

    /** Runs the handler on [entry] (inside [tx], if any); what became of it. An interruption is thrown as is. */
    private fun handled(entry: InboxEntry, tx: T?): InboxOutcome {
        check(!transactional || tx != null) { "the worker runs the handler inside a transaction" }
        val failure = try {
            handle(parseWebhookEvent(entry.body.toByteArray(Charsets.UTF_8)), tx)
            return InboxOutcome.Done
        } catch (e: Exception) {
            if (interrupting(e)) throw e
            e
        }
        reportHandlerFailure(failure, entry)
        return InboxOutcome.Failed(errorText(failure))
    }

    companion object {
        val log: java.util.logging.Logger = java.util.logging.Logger.getLogger("dev.royaltykit")

        /** The core's `lastError` text for [e] ([handlerErrorText]): its class's simple name and its message. */
        fun errorText(e: Throwable): String =
            handlerErrorText(e.javaClass.simpleName.ifEmpty { e.javaClass.name }, e.message ?: "")
    }
}
