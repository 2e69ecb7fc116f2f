/* A stand-in for Windows' bcryptprimitives.dll, for testing under Wine 8 only (Debian 12's
 * Wine has no such DLL; Wine 9 and every Windows 10 or 11 do). Rust's standard library (1.78 and
 * later) takes its random keys from ProcessPrng in that DLL, so without it no Rust program starts
 * under Wine 8. This one answers ProcessPrng with advapi32's RtlGenRandom (SystemFunction036),
 * as Windows itself did before ProcessPrng. installer/test-windows builds it with mingw-w64 into
 * the test's own Wine prefix; it is never installed or shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
