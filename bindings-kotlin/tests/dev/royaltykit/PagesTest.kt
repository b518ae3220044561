package dev.royaltykit

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import dev.royaltykit.client.EnterpriseClient
import dev.royaltykit.client.HttpOutcome
import dev.royaltykit.client.HttpTransport
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.client.ReportsClient
import dev.royaltykit.coroutines.paginateFlow
import dev.royaltykit.okhttp.OkHttpTransport
import dev.royaltykit.types.ErrorFamily
import dev.royaltykit.types.MachineEvent
import dev.royaltykit.types.PagesEnd
import dev.royaltykit.types.RoyaltyKitException
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.BeforeClass
import org.junit.Test
import java.net.URI
import java.time.Duration

/**
 * Every page of a list (the core's `Pages`, driven by `client.paginate` and the coroutines module's
 * `paginateFlow`) against the shared fake API (tests/fakeapi/server.py) over real loopback HTTP,
 * and against a scripted transport for the pages a service should never send.
 */
class PagesTest {
    companion object {
        private lateinit var fake: FakeApi
        private val url get() = fake.url

        @BeforeClass @JvmStatic
        fun start() {
            fake = FakeApi()
        }

        @AfterClass @JvmStatic
        fun stop() = fake.close()
    }

    private fun control(what: String, payload: String? = null) = fake.control(what, payload)
    private fun reset(script: String) = control("reset", script)
    private fun stats() = control("stats")
    private fun requests(op: String) = stats()["requests"].asJsonObject[op]?.asInt ?: 0
    private fun exportIds() = stats()["exports"].asJsonArray.map { it.asJsonObject["id"].asString }
    private val clock = fake.clock
    private val sleep = fake.sleep

    private val transports: List<Pair<String, HttpTransport>> = listOf("java.net.http" to JavaHttpTransport(), "OkHttp" to OkHttpTransport())

    private fun reports(t: HttpTransport = JavaHttpTransport(), onEvent: (MachineEvent) -> Unit = {}) =
        ReportsClient(t, url, "cid", "csecret", TENANT, timeout = Duration.ofSeconds(2), clock = clock, sleep = sleep, onEvent = onEvent)

    private fun enterprise(t: HttpTransport = JavaHttpTransport()) =
        EnterpriseClient(t, url, "key-1", "secret-1", clock = clock, sleep = sleep)

    private fun json(item: ByteArray): JsonObject = JsonParser.parseString(String(item)).asJsonObject
    private fun ids(items: Iterable<ByteArray>) = items.map { json(it)["id"].asString }

    @Test
    fun everyExportOnceInOrderWithEachCursorStyle() {
        for ((name, t) in transports) {
            for (style in listOf("next_cursor", "meta", "links", "none")) {
                reset("""{"existing":{"count":25},"list":{"page_size":10,"cursor":"$style"}}""")
                val events = ArrayList<MachineEvent>()
                // A page that names no next cursor is followed only when it is full: the page size
                // asked for must be the list's own (here capped at 10) for the keyset cursor.
                val items = reports(t) { events.add(it) }
                    .paginate("listPlatformExports", pageSize = if (style == "none") 10 else null).toList()
                assertEquals("$name $style", exportIds(), ids(items))
                assertEquals("$name $style", 25, ids(items).toSet().size)
                assertEquals("$name $style", 3, requests("listPlatformExports"))
                // each page is one operation of the client: its send among the events
                assertEquals("$name $style", 3, events.count { it.kind == "send" && it.operation == "listPlatformExports" })
            }
        }
    }

    @Test
    fun eachItemIsTheJsonTextTheServiceSent() {
        reset("""{"existing":{"count":3}}""")
        val items = reports().paginate("listPlatformExports").toList()
        val ids = exportIds()
        // json.dumps' separators kept: the item's own bytes, not a re-serialisation
        assertEquals(ids.map { """{"id": "$it", "status": "ready"}""" }, items.map { String(it) })
    }

    @Test
    fun theWalkIsLazyAndStopsAtItsBounds() {
        val script = """{"existing":{"count":25},"list":{"page_size":10}}"""
        reset(script)
        val twelve = reports().paginate("listPlatformExports", maxItems = 12).toList()
        assertEquals(exportIds().take(12), ids(twelve))
        assertEquals("the third page is never asked for", 2, requests("listPlatformExports"))

        reset(script)
        val one = reports().paginate("listPlatformExports", maxPages = 1).toList()
        assertEquals(exportIds().take(10), ids(one))
        assertEquals(1, requests("listPlatformExports"))

        // nothing is sent before the first item is asked for, and a page only when its items are
        reset(script)
        val walk = reports().paginate("listPlatformExports", query = mapOf("limit" to 10))
        assertEquals(0, requests("listPlatformExports") + requests("exchangePlatformClientCredential"))
        assertEquals(exportIds().take(3), ids(walk.take(3).toList()))
        assertEquals(1, requests("listPlatformExports"))
        val iterator = walk.iterator()
        repeat(11) { iterator.next() }
        assertEquals(3, requests("listPlatformExports")) // a second iteration walks again from the start
        assertEquals(exportIds(), ids(walk.toList()))
    }

    @Test
    fun subscriptionsAreReadPageByNumberedPage() {
        for ((name, t) in transports) {
            reset("""{"subscriptions":23}""")
            val refs = enterprise(t).paginate("listEnterpriseSubscriptions", pageSize = 10).map { json(it)["reference"].asString }.toList()
            assertEquals(name, (1..23).map { "sub_%03d".format(it) }, refs)
            assertEquals(name, 3, requests("listEnterpriseSubscriptions"))
            // no page size: the spec's default of 10 a page
            reset("""{"subscriptions":23}""")
            assertEquals(name, 23, enterprise(t).paginate("listEnterpriseSubscriptions").count())
            assertEquals(name, 3, requests("listEnterpriseSubscriptions"))
        }
    }

    @Test
    fun aFailedPageIsRetriedByItsCallAndNoItemIsGivenTwice() {
        for ((name, t) in transports) {
            reset("""{"existing":{"count":25},"list":{"page_size":10},"faults":[{"op":"listPlatformExports","nth":2,"do":"status","status":503}]}""")
            val items = reports(t).paginate("listPlatformExports").toList()
            assertEquals(name, exportIds(), ids(items))
            assertEquals(name, 4, requests("listPlatformExports"))
        }
    }

    @Test
    fun wrongArgumentsAreRefusedBeforeAnyRequest() {
        reset("{}")
        val client = reports()
        val cases = listOf<() -> Unit>(
            { client.paginate("createPlatformExport") },
            { client.paginate("noSuchOperation") },
            { client.paginate("listPlatformExports", pageSize = 101) },
            { client.paginate("listPlatformExports", pageSize = 0) },
            { client.paginate("listPlatformExports", maxPages = 0) },
            { client.paginate("listPlatformExports", maxItems = -1) },
            { client.paginate("listPlatformExports", query = mapOf("limit" to 5), pageSize = 10) },
        )
        for ((n, case) in cases.withIndex()) {
            try {
                case()
                fail("case $n was accepted")
            } catch (e: RoyaltyKitException) {
                assertEquals("case $n", "invalid_argument", e.code)
                assertEquals("case $n", ErrorFamily.INVALID_ARGUMENT, e.family)
            }
        }
        assertEquals(0, stats()["requests"].asJsonObject.entrySet().sumOf { it.value.asInt })
    }

    /** A reporting API that answers the token exchange, then each list request with the next of [pages]. */
    private class Scripted(vararg pages: String) : HttpTransport {
        private val left = ArrayDeque(pages.toList())
        val queries = ArrayList<String?>()
        override fun send(request: dev.royaltykit.client.HttpRequest, timeout: Duration, target: dev.royaltykit.client.BodyTarget): HttpOutcome {
            val json = listOf("Content-Type" to "application/json")
            if (request.url.endsWith("/oauth/token")) {
                return HttpOutcome.Response(200, json + ("Cache-Control" to "no-store"),
                    """{"access_token":"rt_scripted","token_type":"Bearer","expires_in":3600}""".toByteArray())
            }
            queries.add(URI.create(request.url).rawQuery)
            return HttpOutcome.Response(200, json, left.removeFirst().toByteArray())
        }
    }

    private fun scriptedClient(t: HttpTransport) =
        ReportsClient(t, "https://reports.example", "cid", "csecret", TENANT, clock = clock, sleep = sleep, onEvent = {})

    @Test
    fun aPageThatIsNotAListIsAPaginationError() {
        val t = Scripted("""{"data":[{"id":"a"},{"id":"b"}],"next_cursor":"$C2"}""", """{"message":"not a page"}""")
        val got = ArrayList<String>()
        try {
            for (item in scriptedClient(t).paginate("listPlatformExports")) got.add(json(item)["id"].asString)
            fail("a page without items was taken for the end")
        } catch (e: RoyaltyKitException.Pagination) {
            assertEquals("page_unreadable", e.code)
            assertEquals(ErrorFamily.PAGINATION, e.family)
            assertEquals(500.toUShort(), e.httpStatus)
            assertTrue(e.message, e.message!!.contains("listPlatformExports"))
        }
        assertEquals("the items before it stand", listOf("a", "b"), got)
        assertEquals(listOf("limit=100", "limit=100&cursor=$C2"), t.queries)
    }

    @Test
    fun aPageThatSaysMoreWithoutSayingHowAndARepeatedCursorEndTheWalk() {
        val unknown = Scripted("""{"data":[{"id":"a"}],"has_more":true}""")
        try {
            scriptedClient(unknown).paginate("listPublishedObservedRates",
                query = mapOf("currency" to "EUR", "currency_basis" to "reporting", "basis" to "net", "dimension" to "territory")).toList()
            fail("accepted")
        } catch (e: RoyaltyKitException.Pagination) {
            assertEquals("next_page_unknown", e.code)
        }
        // (the export list's cursor is a UUID: the request refuses anything else)
        val looping = Scripted("""{"data":[{"id":"a"}],"next_cursor":"$C2"}""", """{"data":[{"id":"b"}],"next_cursor":"$C2"}""")
        val seen = ArrayList<String>()
        try {
            scriptedClient(looping).paginate("listPlatformExports").forEach { seen.add(json(it)["id"].asString) }
            fail("accepted")
        } catch (e: RoyaltyKitException) {
            assertEquals("list_cursor_repeated", e.code)
        }
        assertEquals(listOf("a", "b"), seen)
    }

    @Test
    fun theMachineForwardsTheCoresWalk() {
        Pages("listPlatformExports", listOf(Param("format", "csv")), maxItems = 3).use { walk ->
            val first = walk.next() as PagesStep.Fetch
            assertEquals(listOf(Param("limit", "100"), Param("format", "csv")), first.query)
            val items = walk.pageItems("""{"data":[ {"id":1} , {"id":2,"n":[1,2]} ],"next_cursor":"c"}""".toByteArray())
            assertEquals(listOf("""{"id":1}""", """{"id":2,"n":[1,2]}"""), items!!.map { String(it) })
            assertEquals(Param("cursor", "c"), (walk.next() as PagesStep.Fetch).query.last())
            assertEquals(listOf("[3]"), walk.pageItems("""[[3],[4]]""".toByteArray())!!.map { String(it) })
            val done = walk.next() as PagesStep.Done
            assertEquals(PagesEnd.MAX_ITEMS, done.end)
            assertEquals(2L to 3L, done.pages to done.items)
            assertEquals(2L to 3L, walk.pages() to walk.items())
            try {
                walk.page("[]".toByteArray())
                fail("a page after the end was taken")
            } catch (e: RoyaltyKitException.InvalidArgument) {
                assertEquals("invalid_argument", e.code)
            }
        }
        Pages("listPlatformExports").use { walk ->
            assertEquals(null, walk.pageItems("not json".toByteArray()))
            val fail = walk.next() as PagesStep.Fail
            assertTrue(fail.error is RoyaltyKitException.Pagination)
            assertEquals("page_unreadable", fail.error.code)
        }
    }

    @Test
    fun theFlowGivesEveryItemAndStopsWhenItsCollectorDoes() = kotlinx.coroutines.runBlocking {
        reset("""{"existing":{"count":25},"list":{"page_size":10}}""")
        val client = reports()
        assertEquals(exportIds(), ids(client.paginateFlow("listPlatformExports").toList()))
        assertEquals(3, requests("listPlatformExports"))
        reset("""{"existing":{"count":25},"list":{"page_size":10}}""")
        assertEquals(exportIds().take(4), ids(reports().paginateFlow("listPlatformExports", RequestParams(), maxItems = 12).take(4).toList()))
        assertEquals("a page only when its items are collected", 1, requests("listPlatformExports"))
        try {
            client.paginateFlow("listPlatformExports", pageSize = 500)
            fail("accepted")
        } catch (e: RoyaltyKitException.InvalidArgument) {
            assertEquals("page_size", e.argument)
        }
    }

    @Test
    fun cancellingTheFlowMidWalkStopsTheWaitForTheNextPage() = kotlinx.coroutines.runBlocking {
        // the second page answers 429 with a minute's Retry-After: the real clock waits it out,
        // unless the collector is cancelled, which interrupts that wait and sends nothing more
        reset("""{"existing":{"count":25},"list":{"page_size":10},"faults":[{"op":"listPlatformExports","nth":2,"do":"status","status":429,"retry_after":60}]}""")
        val client = ReportsClient(JavaHttpTransport(), url, "cid", "csecret", TENANT, onEvent = {})
        val got = java.util.Collections.synchronizedList(ArrayList<ByteArray>())
        val job = launch { client.paginateFlow("listPlatformExports").collect { got.add(it) } }
        val deadline = System.nanoTime() + 20_000_000_000L
        while (requests("listPlatformExports") < 2 && System.nanoTime() < deadline) kotlinx.coroutines.delay(50)
        kotlinx.coroutines.delay(300)
        val started = System.nanoTime()
        job.cancel()
        job.join()
        assertTrue("$job", job.isCancelled)
        assertTrue("cancelled at once", System.nanoTime() - started < 10_000_000_000L)
        assertEquals(exportIds().take(10), ids(got))
        kotlinx.coroutines.delay(300)
        assertEquals(2, requests("listPlatformExports"))
    }

    @Test
    fun anInterruptedWalkEndsItsWaitAndSendsNothingMore() {
        reset("""{"existing":{"count":25},"list":{"page_size":10},"faults":[{"op":"listPlatformExports","nth":2,"do":"status","status":429,"retry_after":60}]}""")
        val client = ReportsClient(JavaHttpTransport(), url, "cid", "csecret", TENANT, onEvent = {})
        val got = java.util.Collections.synchronizedList(ArrayList<ByteArray>())
        val outcome = java.util.concurrent.atomic.AtomicReference<Throwable?>()
        val walker = Thread { try { client.paginate("listPlatformExports").forEach { got.add(it) } } catch (e: Throwable) { outcome.set(e) } }
        walker.start()
        val deadline = System.currentTimeMillis() + 20_000
        while (requests("listPlatformExports") < 2 && System.currentTimeMillis() < deadline) Thread.sleep(50)
        Thread.sleep(300)
        walker.interrupt()
        walker.join(10_000)
        assertTrue("${outcome.get()}", outcome.get() is InterruptedException)
        assertEquals(10, got.size)
        assertEquals(2, requests("listPlatformExports"))
    }
}

private const val TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
private const val C2 = "7d1f0a2b-3c4d-4e5f-8a6b-9c0d1e2f3a4b"
