package dev.royaltykit

import dev.royaltykit.client.EnterpriseClient
import dev.royaltykit.client.HttpRequest
import dev.royaltykit.client.JavaHttpTransport
import java.time.Duration
import java.util.concurrent.Callable
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger

/**
 * A worker process of the fleet test (FleetTest): one [EnterpriseClient] of the fake API's key on a
 * [RedisFleet], making its requests (`listEnterpriseCountries`) all at once, one thread each, from
 * a given moment on (so that the processes overlap whatever their JVMs' start-up). Prints
 * `done <succeeded> <failed> <exchanges> <rate_limited events>` and exits 0 when every request
 * succeeded.
 *
 * Arguments: base URL, Redis port, fleet prefix, requests, budget (`preset`: the enterprise
 * preset, else one window `api_client` of that many requests a minute), start at (Unix ms).
 */
object FleetChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val (url, port, prefix, count, limit) = args
        val startAt = args[5].toLong()
        val budget = if (limit == "preset") RateBudget.preset("enterprise") else RateBudget(listOf(RateWindow("api_client", limit.toLong(), 60)))
        val limited = AtomicInteger()
        val transport = JavaHttpTransport()
        // The HTTP stack warmed before the start (a control route of the fake, no request of the
        // client's): a cold JVM's first sends reach the service most of a second after the fleet
        // reserved them, long enough on a busy machine for the service's rolling minute to count
        // them with the next window's.
        transport.send(HttpRequest("GET", "$url/_fake/stats", emptyList(), null), Duration.ofSeconds(10)) { _, _ -> null }
        val client = EnterpriseClient(
            transport, url, "key-1", "secret-1", budget = budget,
            onEvent = { if (it.kind == "rate_limited") limited.incrementAndGet() },
            fleet = RedisFleet(Resp(port.toInt()), prefix),
        )
        val n = count.toInt()
        val pool = Executors.newFixedThreadPool(n)
        Thread.sleep((startAt - System.currentTimeMillis()).coerceAtLeast(0))
        val results = pool.invokeAll((1..n).map { Callable { runCatching { client.request("listEnterpriseCountries") } } })
        pool.shutdown()
        val failed = results.map { it.get() }.filter { it.isFailure }
        failed.forEach { it.exceptionOrNull()!!.printStackTrace() }
        println("done ${n - failed.size} ${failed.size} ${client.session.exchanges()} ${limited.get()}")
        System.out.flush()
        System.exit(if (failed.isEmpty()) 0 else 1)
    }
}
