package dev.royaltykit

import dev.royaltykit.client.driven
import dev.royaltykit.types.ReceiptStep
import dev.royaltykit.types.RoyaltyKitException
import org.junit.Assert.assertArrayEquals
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.io.File
import java.security.MessageDigest
import java.util.zip.ZipFile

/**
 * The native library's loading and the JNI hot path. scripts/test-kotlin.sh runs the suites twice:
 * with the JNI path (`-Droyaltykit.native.dir=<empty dir>`) and with `-Droyaltykit.jni=false`
 * (JNA only), so every verification test passes through both.
 */
class NativePathTest {
    private val jniWanted = System.getProperty("royaltykit.jni") != "false"
    private val secret = "whsec_native_path"
    private val body = """{"event":"export.completed","resource":{"type":"export","reference":"e1","url":"/x"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()
    private val now = 1_763_784_000L

    @Test
    fun theJniPathIsInUseExactlyWhenWanted() {
        assertEquals(jniWanted, RoyaltyKitNative.jni)
        if (!jniWanted) {
            assertNull(RoyaltyKitNative.path)
            return
        }
        val path = File(RoyaltyKitNative.path ?: error("no library path"))
        val dir = File(System.getProperty("royaltykit.native.dir") ?: error("the suite sets royaltykit.native.dir"))
        assertEquals(dir.canonicalFile, path.parentFile.parentFile.canonicalFile)
        // The cached file is the jar's library, byte for byte, under its digest.
        val jar = File(WebhookVerifier::class.java.protectionDomain.codeSource.location.toURI())
        val shipped = ZipFile(jar).use { z -> z.getInputStream(z.getEntry("linux-x86-64/${path.name}")).readBytes() }
        assertArrayEquals(shipped, path.readBytes())
        val sha = MessageDigest.getInstance("SHA-256").digest(shipped).joinToString("") { "%02x".format(it) }
        assertEquals(sha, path.parentFile.name)
        assertEquals(path.path, System.getProperty("uniffi.component.royaltykit_kotlin.libraryOverride"))
        assertEquals(path.path, System.getProperty("uniffi.component.royaltykit.libraryOverride"))
    }

    @Test
    fun aSecondProcessReusesTheCachedLibrary() {
        if (!jniWanted) return
        val path = File(RoyaltyKitNative.path ?: error("no library path"))
        val before = path.lastModified()
        Thread.sleep(1_100) // a re-extraction would show as a later modification time
        val java = File(System.getProperty("java.home"), "bin/java").path
        val child = ProcessBuilder(
            java, "-cp", System.getProperty("java.class.path"),
            "-Droyaltykit.native.dir=${System.getProperty("royaltykit.native.dir")}",
            "dev.royaltykit.NativePathChild",
        ).redirectErrorStream(true).start()
        val out = child.inputStream.bufferedReader().readText().trim()
        assertEquals("child failed: $out", 0, child.waitFor())
        assertEquals("true ${path.path} dlv_child", out)
        assertEquals(before, path.lastModified())
        assertEquals(1, path.parentFile.listFiles()!!.size) // no temporary file left behind
    }

    @Test
    fun aJvmThatOnlyVerifiesNeverStartsJna() {
        if (!jniWanted) return
        val log = File.createTempFile("classes", ".log")
        try {
            val java = File(System.getProperty("java.home"), "bin/java").path
            val child = ProcessBuilder(
                java, "-cp", System.getProperty("java.class.path"), "-Xlog:class+load=info:file=${log.path}",
                "-Droyaltykit.native.dir=${System.getProperty("royaltykit.native.dir")}",
                // Signed here: signWebhook itself crosses through JNA.
                "dev.royaltykit.NativePathChild", *childHeaders().flatMap { listOf(it.key, it.value) }.toTypedArray(),
            ).redirectErrorStream(true).start()
            val out = child.inputStream.bufferedReader().readText().trim()
            assertEquals("child failed: $out", 0, child.waitFor())
            assertTrue(out, out.endsWith(" dlv_child"))
            val loaded = log.readLines().mapNotNull { Regex("""\] (\S+) source:""").find(it)?.groupValues?.get(1) }.toSet()
            assertTrue("the child's class log is empty", "dev.royaltykit.WebhookVerifier" in loaded)
            // JNA's Native class (its start) and uniffi's library objects (its registrations).
            for (name in listOf("com.sun.jna.Native", "dev.royaltykit.UniffiLib", "dev.royaltykit.types.UniffiLib")) {
                assertFalse("$name was loaded", name in loaded)
            }
        } finally {
            log.delete()
        }
    }

    /**
     * A client's call through JNI (`JniCall`, src/jni.rs `callOpen`/`callStep`) answers as the
     * same call through JNA, input for input: a refresh, a send, a 503 with `Retry-After`, the
     * wait, a timeout, a 200, each step's events, and an input the machine refuses.
     */
    @Test
    fun aClientCallThroughJniAnswersAsThroughJna() {
        val base = "https://api.example.com/v1"
        fun transcript(m: dev.royaltykit.client.Driven): List<String> {
            val seen = mutableListOf<String>()
            var now = 1_763_900_000.0
            fun note(a: dev.royaltykit.client.Advanced): CallStep? {
                val w = a.wire ?: (a.step as? CallStep.Send)?.request?.wire(base)
                seen += if (w != null) "send ${w.method} ${w.url} ${w.headers} ${w.body?.decodeToString()}" else "${a.step}"
                seen += a.events.map { "event $it" }
                return a.step
            }
            // the events at each level the clients ask (null: all), the same through both paths
            val (info, warning) = dev.royaltykit.types.EventLevel.INFO to dev.royaltykit.types.EventLevel.WARNING
            note(m.next(now, null))
            seen += "streams ${m.streams(200)}"
            val wait = note(m.report(StepOutcome.Response(503, mapOf("Retry-After" to "7"), "{}".toByteArray()), now, info)) as CallStep.Wait
            now += wait.seconds
            note(m.next(now, warning))
            val wait2 = note(m.report(StepOutcome.NoResponse(dev.royaltykit.types.TransportFailure.TIMEOUT), now, null)) as CallStep.Wait
            now += wait2.seconds
            note(m.next(now, null))
            note(m.report(StepOutcome.Response(200, mapOf("content-type" to "application/json"), """{"data":[]}""".toByteArray()), now, null))
            // outcomes the machine refuses once over, the same way
            for (o in listOf(StepOutcome.Reply("ok"), StepOutcome.NoResponse(dev.royaltykit.types.TransportFailure.CONNECT_FAILED),
                             StepOutcome.Streamed(200, mapOf("content-length" to "3"), 3), StepOutcome.Streamed(200, emptyMap(), -1))) {
                seen += try { note(m.report(o, now, null)); "accepted" } catch (e: RoyaltyKitException) { "refused ${e.javaClass.simpleName}: ${e.message}" }
            }
            // a download's progress, given to a call that is not one: the same events either way
            m.progress(3, 10)
            m.progress(10, null)
            seen += m.events(null).map { "event $it" }
            return seen
        }
        Session().use { session ->
            session.storeToken(BearerToken.enterprise("tok-1"), 1_763_990_000.0)
            val params = RequestParams()
            val jna = Call("listEnterpriseCountries", params, seed = 42uL).use { transcript(it.driven(session)) }
            if (jniWanted) {
                val cloned = ClonedHandle(session.uniffiCloneHandle(), 2)
                try {
                    val jni = dev.royaltykit.client.JniCall.open(cloned, base, "listEnterpriseCountries", params, null, null, 42uL)
                    assertTrue("the call did not open through JNI", jni != null)
                    jni!!.use { assertEquals(jna, transcript(it.driven)) }
                } finally {
                    cloned.close()
                }
            } else {
                assertFalse(NativeFast.available)
            }
            assertTrue(jna.toString(), jna.count { it.startsWith("send GET https://api.example.com/v1/") } == 3 && jna.any { it.startsWith("Done") })
            assertEquals(jna.toString(), 4, jna.count { it.startsWith("refused ") })
            // the 503's `response` (debug) was asked from `info`: only the 200's is there
            assertEquals(jna.toString(), 1, jna.count { it.startsWith("event MachineEvent(kind=response") })
        }
    }

    @Test
    fun theCacheRecordIsReadExactly() {
        val digest = "0123456789abcdef".repeat(4)
        for (good in listOf("$digest 1", "$digest 123456\n", "$digest 42 \r\n", "$digest ${"9".repeat(18)}")) {
            assertEquals(good, digest, NativeLoader.recordDigest(good))
            assertEquals(good, good.substring(65).trim().toLong(), NativeLoader.recordSize(good))
        }
        val refused = listOf(
            "", "$digest", "$digest ", "$digest  1", "${digest.uppercase()} 1", "${digest.drop(1)} 1", "${digest}0 1",
            "${digest.dropLast(1)}g 1", "$digest\t1", "$digest 1x", "$digest 1 2", "$digest ${"9".repeat(19)}", "$digest -1",
            "$digest \u0663", // an Arabic-Indic digit: not a size
        )
        for (bad in refused) assertNull(bad, NativeLoader.recordSize(bad))
        for (bad in listOf("", "${digest.uppercase()} 1", "${digest.drop(1)} 1", "${digest.dropLast(1)}g 1", "$digest\t1")) {
            assertNull(bad, NativeLoader.recordDigest(bad))
        }
    }

    @Test
    fun aVerifierBuiltEitherWayRefusesTheSameArgumentsAndServesEveryMethod() {
        val headers = signWebhook(secret, body, now, "dlv_args")
        // Refused arguments: the constructor (JNI in this run when wanted) against the one-shot
        // verifyWebhook, which always crosses through JNA and checks them in the same order.
        for ((label, args) in listOf<Pair<String, (Boolean) -> Unit>>(
            "negative tolerance" to { ctor -> if (ctor) WebhookVerifier(listOf(secret), -1L) else verifyWebhook(headers, body, listOf(secret), now, -1L) },
            "negative body limit" to { ctor -> if (ctor) WebhookVerifier(listOf(secret), null, -1L) else verifyWebhook(headers, body, listOf(secret), now, null, -1L) },
            "validUntil of another length" to { ctor ->
                if (ctor) WebhookVerifier(listOf(secret), null, null, listOf(1L, 2L)) else verifyWebhook(headers, body, listOf(secret), now, null, null, listOf(1L, 2L))
            },
        )) {
            val viaJna = try { args(false); fail(label); null } catch (e: RoyaltyKitException) { e }
            try {
                args(true); fail("$label accepted")
            } catch (e: RoyaltyKitException) {
                assertEquals(label, viaJna!!.javaClass, e.javaClass)
                assertEquals(label, viaJna.code, e.code)
                assertEquals(label, viaJna.message, e.message)
            }
        }
        // A lone surrogate is refused before any crossing, as uniffi's own lowering does.
        try { WebhookVerifier(listOf("a\uD800b")); fail("a lone surrogate was accepted") } catch (e: java.nio.charset.CharacterCodingException) { }
        // The verifier built through JNI is an ordinary uniffi object: its other methods cross
        // through JNA with a cloned handle, and close() frees it (through JNI when in use).
        val v = WebhookVerifier(listOf("other", secret), 60L, 4096L, listOf(null, now + 100))
        assertEquals(4096L, v.maxBodyBytes())
        assertEquals(1u, v.verify(headers, body, now).secretIndex)
        val step = v.receipt(headers, body, "ns", now).next()
        assertTrue(step.toString(), step !is ReceiptStep.Reply)
        // The tolerance and the secret's validUntil crossed.
        try { v.verify(headers, body, now + 61); fail("the tolerance was not applied") } catch (e: RoyaltyKitException) { assertEquals("timestamp_too_old", e.code) }
        val later = signWebhook(secret, body, now + 150, "dlv_later")
        assertEquals("dlv_later", WebhookVerifier(listOf("other", secret)).use { it.verify(later, body, now + 150).deliveryId })
        try { v.verify(later, body, now + 150); fail("validUntil was not applied") } catch (e: RoyaltyKitException) { }
        v.close()
        try { v.verify(headers, body, now); fail("a closed verifier verified") } catch (e: IllegalStateException) { }
    }

    @Test
    fun bothPathsGiveTheSameAnswersAndErrors() {
        val headers = signWebhook(secret, body, now, "dlv_native")
        WebhookVerifier(listOf("other", secret)).use { v ->
            val viaDefault = v.verify(headers, body, now)
            // The one-shot verifyWebhook always crosses through JNA.
            assertEquals(verifyWebhook(headers, body, listOf("other", secret), now), viaDefault)
            assertEquals("dlv_native", viaDefault.deliveryId)
            assertEquals(1u, viaDefault.secretIndex)
            for ((label, h, b) in listOf(
                Triple("forged", headers + ("Service-Webhook-Signature" to "v1=" + "0".repeat(64)), body),
                Triple("late", headers, body),
                Triple("not JSON", signWebhook(secret, "{".toByteArray(), now, "d"), "{".toByteArray()),
            )) {
                val at = if (label == "late") now + 10_000 else now
                val viaJna = try { verifyWebhook(h, b, listOf("other", secret), at); fail(label); null } catch (e: RoyaltyKitException) { e }
                try {
                    v.verify(h, b, at); fail("$label accepted")
                } catch (e: RoyaltyKitException) {
                    assertEquals(label, viaJna!!.javaClass, e.javaClass)
                    assertEquals(label, viaJna.code, e.code)
                    assertEquals(label, viaJna.message, e.message)
                    assertEquals(label, viaJna.httpStatus, e.httpStatus)
                }
            }
        }
        // A closed verifier is refused on either path, never a crash.
        val closed = WebhookVerifier(listOf(secret)).also { it.close() }
        try { closed.verify(headers, body, now); fail("a closed verifier verified") } catch (e: IllegalStateException) { assertFalse(e.message.isNullOrEmpty()) }
        assertTrue(RoyaltyKitNative.jni == jniWanted)
    }

    /**
     * The stores' per-delivery protocol calls cross through JNI exactly when it is in use, and
     * answer what the generated JNA methods answer. (A store falls back to JNA silently when the
     * JNI call does not complete: only this test sees that the fast path is taken.)
     */
    @Test
    fun theStoresProtocolCallsCrossThroughJniAndAgreeWithJna() {
        val redis = RedisDedupProtocol("rk:test:", 100, 5)
        val sql = SqlDedupProtocol(dev.royaltykit.types.SqlDialect.POSTGRES, dev.royaltykit.types.ParamStyle.QMARK, "dedup_t", 100, 5)
        val fastRedis = FastDedup.of(sql = false) { redis.uniffiCloneHandle() }
        val fastSql = FastDedup.of(sql = true) { sql.uniffiCloneHandle() }
        if (!jniWanted) {
            assertNull(fastRedis)
            assertNull(fastSql)
            return
        }
        fun str(vararg v: String) = v.fold(java.io.ByteArrayOutputStream()) { out, s ->
            val b = s.toByteArray(); out.write(java.nio.ByteBuffer.allocate(4).putInt(b.size).array()); out.write(b); out
        }.toByteArray()
        fun call(f: FastDedup?, op: Int, args: ByteArray) =
            f!!.call(op, args.size.toULong()) { it.put(args) } ?: error("op $op did not cross through JNI")
        val key = "dlv1:org_1:wh_é"
        // Redis: claim (a new token and its command), its reply, the guarded commit and release.
        val claim = call(fastRedis, 1, str(key))
        val token = FfiConverterString.read(claim)
        assertTrue(token, token.matches(Regex("[0-9a-f]{32}")))
        assertEquals(redis.claimCommand(key, token), FfiConverterSequenceString.read(claim))
        for (reply in listOf("OK", null, "claim:x")) {
            val args = if (reply == null) byteArrayOf(0) else byteArrayOf(1) + str(reply)
            assertEquals(redis.claimReply(reply), FfiConverterOptionalTypeClaimState.read(call(fastRedis, 2, args)))
        }
        assertEquals(redis.commitCommand(key, token), FfiConverterSequenceString.read(call(fastRedis, 3, str(key, token))))
        assertEquals(redis.releaseCommand(key, token), FfiConverterSequenceString.read(call(fastRedis, 4, str(key, token))))
        // A token the core refuses: its error, as through JNA.
        try { call(fastRedis, 3, str(key, "bad token!")); fail("a bad token was taken") } catch (e: RoyaltyKitException) {
            try { redis.commitCommand(key, "bad token!"); fail("JNA took it") } catch (j: RoyaltyKitException) { assertEquals(j.message, e.message) }
        }
        // SQL: claim at now, its reply, the mark inside the transaction, the guarded reply.
        val now = 1_763_784_000L
        val long = { v: Long -> java.nio.ByteBuffer.allocate(8).putLong(v).array() }
        val sqlClaim = call(fastSql, 11, str(key) + long(now))
        val sqlToken = FfiConverterString.read(sqlClaim)
        assertEquals(sql.claim(key, sqlToken, now), dev.royaltykit.types.FfiConverterTypeSqlStatement.read(sqlClaim))
        for (rows in listOf(0L, 1L)) {
            assertEquals(sql.claimReply(rows), FfiConverterOptionalTypeClaimState.read(call(fastSql, 12, long(rows))))
            assertEquals(sql.guardedReply(rows), FfiConverterBoolean.read(call(fastSql, 14, long(rows))))
        }
        assertEquals(sql.markDone(key, sqlToken, now), dev.royaltykit.types.FfiConverterTypeSqlStatement.read(call(fastSql, 13, str(key, sqlToken) + long(now))))
        // Arguments that do not read back, an unknown operation, a closed handle: null (the store then calls through JNA).
        assertNull(fastRedis!!.call(1, 2UL) { it.put(byteArrayOf(0, 0)) })
        assertNull(fastRedis.call(99, 0UL) {})
        // Closed while a call is in flight: that call completes (the handle is released after it),
        // and the calls after the close answer null.
        val inFlight = fastRedis.call(1, FfiConverterString.allocationSize(key)) {
            FfiConverterString.write(key, it)
            fastRedis.close()
        }
        assertTrue(FfiConverterString.read(inFlight ?: error("the call in flight did not complete")).length == 32)
        assertNull(fastRedis.call(1, FfiConverterString.allocationSize(key)) { FfiConverterString.write(key, it) })
        fastRedis.close()
        fastSql!!.close()
        redis.close()
        sql.close()
    }
}

private const val CHILD_SECRET = "whsec_child"
private val CHILD_BODY = """{"event":"e","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()

/** The headers [NativePathChild] verifies. */
internal fun childHeaders(): Map<String, String> = signWebhook(CHILD_SECRET, CHILD_BODY, 100, "dlv_child")

/**
 * The child process of [NativePathTest.aSecondProcessReusesTheCachedLibrary] and
 * [NativePathTest.aJvmThatOnlyVerifiesNeverStartsJna]: builds a verifier, verifies one delivery
 * (its headers given as `name value …` arguments, or else signed here) and closes the verifier.
 */
object NativePathChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val headers = if (args.isEmpty()) childHeaders() else args.toList().chunked(2).associate { it[0] to it[1] }
        // Closed at the end: with JNI its handle is freed there too, without starting JNA.
        val id = WebhookVerifier(listOf(CHILD_SECRET)).use { it.verify(headers, CHILD_BODY, 100).deliveryId }
        println("${RoyaltyKitNative.jni} ${RoyaltyKitNative.path} $id")
    }
}
