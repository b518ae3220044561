// The processes of one API client sharing one token and one rate budget through Redis (the core's
// Fleet): the commands and what their replies mean are the core's; this sends them through the
// host's Redis client, as RedisDedupStore does.
package dev.royaltykit

/**
 * A fleet of processes (workers, replicas) of one API client sharing **one token** (one exchange
 * for the fleet, as the token exchange's "tighter credential and source limits" want) and **one
 * rate budget** (the enterprise API's limits hold per API client, across processes) through one
 * Redis. Give it to the clients (`EnterpriseClient(..., fleet = RedisFleet(commands, prefix))`,
 * `ReportsClient(..., fleet = ...)`): their session is then [session] of the client's budget, each
 * request is reserved in Redis before it is sent, and a token is obtained through the fleet.
 *
 * [redis] is the same client interface [RedisDedupStore] takes ([RedisCommands]: one command,
 * the reply as text, nil as null, throwing when Redis cannot be reached); it must answer `EVAL`.
 * [prefix] (null: `royaltykit:fleet:`) names the fleet's keys: give each API client its own (your
 * prefix and the API key's id), so two clients never share a budget; the constructor throws
 * `RoyaltyKitException.InvalidArgument` for an empty prefix, one over 128 bytes or one with spaces
 * or control characters.
 *
 * When Redis cannot be reached a request waits and asks again each second (a `rate_limited` event;
 * it is never sent uncounted), and a token is obtained by the process on its own. The token is
 * stored in Redis: protect that Redis as you protect the API secret. The hosts' clocks must agree
 * to within a second (one machine, or NTP). Thread-safe, as [redis] must be.
 */
class RedisFleet @JvmOverloads constructor(
    /** The Redis client the fleet's commands go through. */
    val redis: RedisCommands,
    prefix: String? = null,
) : AutoCloseable {
    /** The core's fleet: its key prefix, and the sessions it makes. */
    val fleet: Fleet = Fleet(prefix)

    /** The key prefix. */
    val prefix: String = fleet.prefix()

    /**
     * A new session of the fleet, pacing its calls by [budget] counted in Redis (null: no budget,
     * the token is still the fleet's). A client given this fleet builds its own with its budget.
     */
    @JvmOverloads
    fun session(budget: RateBudget? = null): Session = fleet.session(budget)

    /** Whether [session] is a session of this fleet's keys (made by [session] or `Fleet(prefix).session`). */
    fun owns(session: Session): Boolean = session.fleet()?.use { it.prefix() == prefix } ?: false

    /** [command] sent to Redis: its reply as text (nil: null); throws as [redis] does. */
    internal fun execute(command: List<String>): String? = redis.execute(command)

    override fun close() = fleet.close()

    override fun toString(): String = "RedisFleet(prefix=$prefix)"
}
