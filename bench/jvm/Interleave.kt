// The timing harness of make bench's JVM parts (bench/jvm/Bench.kt, bench/clients/Bench.kt),
// compiled with each: every contender run `warmup` times (JIT warm-up), one batch per contender
// sized to take about `batchNs`, then `rounds` rounds of one batch per contender in turn.

/** How many calls of [fn] take about [batchNs] (found by growing a trial batch). */
fun calibrate(fn: () -> Any?, batchNs: Double, maxN: Long, growth: Long): Long {
    var n = 1L
    while (true) {
        val t0 = System.nanoTime()
        for (i in 0 until n) fn()
        val dt = System.nanoTime() - t0
        if (dt > batchNs / 4 || n > maxN) return maxOf(1L, (n * batchNs / maxOf(dt, 1L)).toLong())
        n *= growth
    }
}

/** Per contender: its name, and the min and median ns per call over the rounds. */
fun timeInterleaved(
    contenders: List<Pair<String, () -> Any?>>,
    rounds: Int,
    batchNs: Double,
    warmup: Int,
    maxN: Long = 10_000_000,
    growth: Long = 4,
): List<Triple<String, Double, Double>> {
    val batches = contenders.map { (_, fn) -> repeat(warmup) { fn() }; calibrate(fn, batchNs, maxN, growth) }
    val samples = contenders.map { ArrayList<Double>() }
    repeat(rounds) {
        contenders.forEachIndexed { k, (_, fn) ->
            val n = batches[k]
            val t0 = System.nanoTime()
            for (i in 0 until n) fn()
            samples[k].add((System.nanoTime() - t0).toDouble() / n)
        }
    }
    return contenders.mapIndexed { k, (name, _) ->
        val s = samples[k].sorted()
        Triple(name, s[0], s[s.size / 2])
    }
}
