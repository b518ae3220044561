// Routing a delivery by its event name: the core's EventRoutes decides which handlers run; this
// file only keeps the handlers by the core's indices and calls them.
package dev.royaltykit

import dev.royaltykit.types.Route
import dev.royaltykit.types.RoyaltyKitException
import dev.royaltykit.types.VerifiedWebhook

/**
 * The event names the spec lists, as the service sends them: one constant per name of
 * [knownEventNames] (the core's list; a test keeps the two equal). The service may send other
 * names: `delivery.event.name` is a `String` that keeps any name as sent, and [EventRouter.on]
 * takes any name.
 */
object EventNames {
    /** A DDEX message's control, transport or partner processing state changed. */
    const val DDEX_DELIVERY_STATUS_CHANGED = "ddex.delivery.status_changed"

    /** Validation, review, contract or state checks blocked a DDEX message's progress. */
    const val DDEX_DELIVERY_BLOCKED = "ddex.delivery.blocked"

    /** The partner acknowledged a DDEX message. */
    const val DDEX_DELIVERY_ACKNOWLEDGED = "ddex.delivery.acknowledged"

    /** The partner rejected a DDEX message. */
    const val DDEX_DELIVERY_REJECTED = "ddex.delivery.rejected"

    /** A DDEX message's retryable transport work exhausted its allowance, or a non-retryable transport block occurred. */
    const val DDEX_DELIVERY_FAILED = "ddex.delivery.failed"

    /** An atomic create-only DDEX import completed. */
    const val DDEX_IMPORT_COMPLETED = "ddex.import.completed"

    /** A DDEX import failed without partial catalog creation. */
    const val DDEX_IMPORT_FAILED = "ddex.import.failed"

    /** A DDEX connection's health needs operator attention. */
    const val DDEX_CONNECTION_DEGRADED = "ddex.connection.degraded"

    /** Sent by a subscription's test endpoint (even when not in its event filter): acknowledge it, do not act on it. */
    const val ENTERPRISE_WEBHOOK_TEST = "enterprise.webhook.test"
}

/**
 * The handlers of one router, kept by the indices the core's [EventRoutes] gives them; which of
 * them a delivery goes to is the core's [Route]. Thread-safe: a registration and a routing take
 * the same lock, so every index a route names is already here.
 */
internal class RouteTable<H : Any> {
    private val routes = EventRoutes()
    private val named = ArrayList<H>()
    private val names = ArrayList<String>()
    private val any = ArrayList<H>()
    private var fallback: H? = null

    @Synchronized
    fun on(name: String, handler: H) {
        val index = routes.on(name) // throws InvalidArgument before anything is kept
        check(index == named.size.toLong()) { "the core numbered registration $index, expected ${named.size}" }
        named.add(handler)
        names.add(name)
    }

    @Synchronized
    fun onAny(handler: H) {
        routes.onAny()
        any.add(handler)
    }

    @Synchronized
    fun otherwise(handler: H) {
        routes.otherwise()
        fallback = handler
    }

    @Synchronized
    fun route(name: String): Route = routes.route(name)

    /** The handlers a delivery of the event [name] goes to, in the order they run. */
    @Synchronized
    fun handlers(name: String): List<H> {
        val r = routes.route(name)
        val out = ArrayList<H>(r.named.size + (if (r.any) any.size else 0) + 1)
        for (i in r.named) out.add(named[i.toInt()])
        if (r.any) out.addAll(any)
        if (r.fallback) fallback?.let { out.add(it) }
        return out
    }

    @Synchronized
    override fun toString(): String = "on=$names, onAny=${any.size}, otherwise=${fallback != null}"
}

/**
 * A webhook handler that hands each delivery to the handlers registered for its event name
 * (`delivery.event.name`, exactly as sent). It is a `(VerifiedWebhook) -> Unit`: give it as the
 * handler of a [WebhookReceiver] on a [DedupStore] (the in-memory window, [RedisDedupStore]):
 * ```
 * val router = EventRouter()
 *     .on(EventNames.DDEX_DELIVERY_FAILED) { delivery -> alert(delivery) }
 *     .on("ddex.import.completed") { delivery -> refresh(delivery.event.resourceUrl) }
 *     .onAny { delivery -> audit(delivery) }          // sees every delivery
 *     .otherwise { delivery -> log(delivery.event.name) } // the deliveries no `on` handler names
 * val receiver = WebhookReceiver(secrets, "org-1", handler = router)
 * ```
 * With a [TransactionalDedupStore] ([JdbcDedupStore]), use [TransactionalEventRouter].
 *
 * The handlers registered for the delivery's name run first, in the order they were registered;
 * then every [onAny] handler, in order; then the fallback ([otherwise]), only when no [on]
 * handler names the event (a name the spec does not list, or one nobody registered). A delivery
 * no handler takes is acknowledged (200): the service does not send it again. Which handlers run
 * is the core's decision ([route]); the router keeps the handlers by the core's indices and
 * calls them.
 *
 * A handler that throws fails the delivery exactly as a plain handler's throw does: the handlers
 * after it do not run, the receiver releases the claims and answers 500, and the service's
 * redelivery runs the handlers again (make each one idempotent). Registering and routing are
 * thread-safe; register every handler before the receiver takes deliveries.
 */
class EventRouter : (VerifiedWebhook) -> Unit {
    private val table = RouteTable<(VerifiedWebhook) -> Unit>()

    /**
     * Registers [handler] for the deliveries of the event [name], as the service sends it
     * ([EventNames], or a name the spec does not list: it is accepted), and returns this router.
     * Throws `RoyaltyKitException.InvalidArgument` (code `invalid_argument`) at once for an empty
     * name, one longer than 256 bytes or one with a space or control character.
     */
    @Throws(RoyaltyKitException::class)
    fun on(name: String, handler: (VerifiedWebhook) -> Unit): EventRouter = apply { table.on(name, handler) }

    /** Registers [handler] for every delivery (after the [on] handlers of its name) and returns this router. */
    fun onAny(handler: (VerifiedWebhook) -> Unit): EventRouter = apply { table.onAny(handler) }

    /**
     * Registers [handler] as the fallback, for the deliveries no [on] handler names (a name the
     * spec does not list, or one nobody registered), and returns this router. A router has one
     * fallback: a later one replaces it.
     */
    fun otherwise(handler: (VerifiedWebhook) -> Unit): EventRouter = apply { table.otherwise(handler) }

    /**
     * Where a delivery of the event [name] goes, as the core decides it: the indices of the [on]
     * registrations (counted from 0 in registration order) whose handlers run, whether the
     * [onAny] handlers run, and whether the fallback does.
     */
    fun route(name: String): Route = table.route(name)

    /** Runs the handlers of [delivery]'s event, in order; the first that throws ends the run. */
    override fun invoke(delivery: VerifiedWebhook) {
        for (handler in table.handlers(delivery.event.name)) handler(delivery)
    }

    /** The names registered, the count of [onAny] handlers and whether there is a fallback. */
    override fun toString(): String = "EventRouter($table)"
}

/**
 * [EventRouter] for a [WebhookReceiver] on a [TransactionalDedupStore] ([JdbcDedupStore]): it is
 * a `(VerifiedWebhook, java.sql.Connection) -> Unit`, and each handler gets the connection of the
 * transaction that also marks the delivery done (write the effect with it; never commit or roll
 * back yourself). The same routing: the [on] handlers of the delivery's name in registration
 * order, then every [onAny] handler, then the fallback ([otherwise]) only when no [on] handler
 * names the event; a delivery no handler takes is acknowledged. A handler that throws rolls the
 * whole transaction back (the effects of the handlers before it too), the handlers after it do
 * not run, and the receiver answers 500 so the service redelivers.
 */
class TransactionalEventRouter : (VerifiedWebhook, java.sql.Connection) -> Unit {
    private val table = RouteTable<(VerifiedWebhook, java.sql.Connection) -> Unit>()

    /** As [EventRouter.on]: `RoyaltyKitException.InvalidArgument` at once for a name that cannot be one. */
    @Throws(RoyaltyKitException::class)
    fun on(name: String, handler: (VerifiedWebhook, java.sql.Connection) -> Unit): TransactionalEventRouter =
        apply { table.on(name, handler) }

    /** As [EventRouter.onAny]. */
    fun onAny(handler: (VerifiedWebhook, java.sql.Connection) -> Unit): TransactionalEventRouter =
        apply { table.onAny(handler) }

    /** As [EventRouter.otherwise]: one fallback, a later one replaces it. */
    fun otherwise(handler: (VerifiedWebhook, java.sql.Connection) -> Unit): TransactionalEventRouter =
        apply { table.otherwise(handler) }

    /** As [EventRouter.route]: where a delivery of the event [name] goes, as the core decides it. */
    fun route(name: String): Route = table.route(name)

    /** Runs the handlers of [delivery]'s event with [connection], in order; the first that throws ends the run. */
    override fun invoke(delivery: VerifiedWebhook, connection: java.sql.Connection) {
        for (handler in table.handlers(delivery.event.name)) handler(delivery, connection)
    }

    /** The names registered, the count of [onAny] handlers and whether there is a fallback. */
    override fun toString(): String = "TransactionalEventRouter($table)"
}
