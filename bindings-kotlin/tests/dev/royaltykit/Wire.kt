package dev.royaltykit

/** A vector's wire name (`idempotent_write`) as the Kotlin enum uniffi derives (`IDEMPOTENT_WRITE`). */
inline fun <reified T : Enum<T>> wire(name: String): T = enumValueOf(name.uppercase())

/** A Kotlin enum as its wire name, to compare with a vector. */
val Enum<*>.wireName: String get() = name.lowercase()

/**
 * The enum for a wire name, or null when Kotlin's types cannot express it (a vector's unknown
 * `jitter` or `retry_class`): such a case expects `invalid_argument`, which the type system
 * already rules out in Kotlin, so it is counted, not run.
 */
inline fun <reified T : Enum<T>> wireOrNull(name: String): T? = enumValues<T>().firstOrNull { it.name == name.uppercase() }

/** Checks that a case Kotlin's types cannot express is one that expects `invalid_argument`. */
fun unrepresentable(case: com.google.gson.JsonObject) {
    org.junit.Assert.assertEquals(case.toString(), "invalid_argument", case.get("error")?.asString)
}
