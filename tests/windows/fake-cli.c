/* A fake coding CLI for the delegation test under Wine, installed as npm does it: a .cmd shim
 * (fake-cli.cmd) in front of node_modules\fake-cli\bin\fake-cli.exe. It writes its arguments,
 * as UTF-8, each followed by a NUL byte, to %FAKE_CLI_OUT%\argv, then:
 *   - a task containing "SLEEP" starts a child (`fake-cli.exe --child <marker>`), waits until the
 *     child has written %FAKE_CLI_OUT%\child.ready, writes %FAKE_CLI_OUT%\cli.ready and sleeps
 *     until killed (so only killing the whole tree ends both);
 *   - anything else prints "fake cli done: <task>" and exits 0. */
#include <windows.h>
#include <shellapi.h>
#include <stdio.h>
#include <wchar.h>

static void out_path(wchar_t *buf, size_t n, const wchar_t *name) {
    wchar_t dir[MAX_PATH];
    DWORD len = GetEnvironmentVariableW(L"FAKE_CLI_OUT", dir, MAX_PATH);
    if (len == 0 || len >= MAX_PATH) {
        wcscpy(dir, L".");
    }
    _snwprintf(buf, n, L"%ls\\%ls", dir, name);
}

static void touch(const wchar_t *name) {
    wchar_t path[MAX_PATH * 2];
    out_path(path, MAX_PATH * 2, name);
    HANDLE f = CreateFileW(path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, 0, NULL);
    if (f != INVALID_HANDLE_VALUE) {
        CloseHandle(f);
    }
}

static BOOL exists(const wchar_t *name) {
    wchar_t path[MAX_PATH * 2];
    out_path(path, MAX_PATH * 2, name);
    return GetFileAttributesW(path) != INVALID_FILE_ATTRIBUTES;
}

int wmain(void) {
    int argc = 0;
    wchar_t **argv = CommandLineToArgvW(GetCommandLineW(), &argc);
    if (argv == NULL) {
        return 3;
    }
    if (argc >= 2 && wcscmp(argv[1], L"--child") == 0) {
        touch(L"child.ready");
        for (;;) {
            Sleep(1000);
        }
    }
    wchar_t path[MAX_PATH * 2];
    out_path(path, MAX_PATH * 2, L"argv");
    HANDLE f = CreateFileW(path, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, 0, NULL);
    if (f == INVALID_HANDLE_VALUE) {
        return 4;
    }
    const wchar_t *task = L"";
    for (int i = 1; i < argc; i++) {
        char utf8[65536];
        int n = WideCharToMultiByte(CP_UTF8, 0, argv[i], -1, utf8, sizeof utf8, NULL, NULL);
        DWORD written;
        /* n counts the terminating NUL, which is the separator. */
        WriteFile(f, utf8, n > 0 ? (DWORD)n : 0, &written, NULL);
        task = argv[i];
    }
    CloseHandle(f);
    if (wcsstr(task, L"SLEEP") == NULL) {
        char utf8[65536];
        WideCharToMultiByte(CP_UTF8, 0, task, -1, utf8, sizeof utf8, NULL, NULL);
        printf("fake cli done: %s\n", utf8);
        return 0;
    }
    wchar_t self[MAX_PATH];
    GetModuleFileNameW(NULL, self, MAX_PATH);
    wchar_t line[MAX_PATH * 2];
    _snwprintf(line, MAX_PATH * 2, L"\"%ls\" --child kernel-wine-grandchild", self);
    STARTUPINFOW si = {sizeof si};
    PROCESS_INFORMATION pi;
    if (!CreateProcessW(NULL, line, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
        return 5;
    }
    while (!exists(L"child.ready")) {
        Sleep(10);
    }
    touch(L"cli.ready");
    for (;;) {
        Sleep(1000);
    }
}
