/* Test-only stand-in for Windows' bcryptprimitives.dll, which Wine 8 lacks: Rust's std calls
 * ProcessPrng from it, so without this file every Rust .exe fails to load under Wine 8
 * (status c0000135). ProcessPrng forwards to advapi32's SystemFunction036 (RtlGenRandom).
 * Built with mingw next to the test .exe files by tests/windows/build; never shipped: Windows
 * 10 and later have the real DLL. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
