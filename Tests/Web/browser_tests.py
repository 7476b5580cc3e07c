#!/usr/bin/env python3
"""Browser tests of the Health app (`wearhouse web`): Debian's chromium, headless, driven by Selenium.

Starts the real binary on temporary stores: an empty one, and one filled by `wearhouse import-samples` with a
pending permission request made over D-Bus by a real client against the real service (`wearhouse run --api` on a
private dbus-daemon). Every page must load without a console error; screenshots go to .build/screenshots/.
Run by `make test-web`; prints "web: N passed, N failed".
"""

import datetime
import http.client
import json
import math
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import traceback

import dbus
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WEARHOUSE = os.path.join(ROOT, ".build", "debug", "wearhouse")
SHOTS = os.path.join(ROOT, ".build", "screenshots")
PAGES = ["/", "/type/heartRate", "/type/heartRate?range=week", "/type/heartRate?range=month",
         "/type/heartRate?range=year", "/type/stepCount", "/type/stepCount?range=week", "/type/heartbeatSeries",
         "/type/sleepAnalysis", "/type/sleepAnalysis?range=week", "/type/sleepAnalysis?range=month",
         "/type/bodyMass?range=month", "/type/bloodPressureSystolic?range=week", "/type/bodyTemperature",
         "/type/restingHeartRate?range=week", "/type/workout?range=week", "/type/bloodPressure?range=week", "/add", "/apps", "/sensors", "/me", "/export"]

results = {"passed": 0, "failed": 0}


def check(name, body):
    started = time.monotonic()
    try:
        body()
        results["passed"] += 1
        print(f"  ok    {name} ({time.monotonic() - started:.1f} s)")
    except Exception:  # every failure is reported, and the run goes on
        results["failed"] += 1
        print(f"  FAIL  {name}")
        traceback.print_exc()


def wearhouse(*arguments, check_status=True):
    done = subprocess.run([WEARHOUSE, *arguments], capture_output=True, text=True, timeout=60)
    if check_status and done.returncode != 0:
        raise AssertionError(f"wearhouse {' '.join(arguments)}: {done.returncode}: {done.stderr}")
    return done.stdout


class WebApp:
    """`wearhouse web` on `store`, on a free port, stopped with SIGTERM."""

    def __init__(self, store, listen="127.0.0.1:0", extra=()):
        self.process = subprocess.Popen(
            [WEARHOUSE, "web", "--store", store, "--listen", listen, "--time-zone", "UTC", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().strip()
        if not line.startswith("http://") and not line.startswith("https://"):
            raise AssertionError(f"wearhouse web printed {line!r}: {self.process.stderr.read()}")
        self.login = line
        self.base = line.split("/?token=")[0]

    def stop(self):
        self.process.terminate()
        assert self.process.wait(timeout=10) == 0, "wearhouse web did not stop cleanly"


def browser():
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1200,1000", "--no-first-run", "--disable-extensions"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def submit(driver, button):
    """Clicks a form's button and waits until the next page replaced this one. While the old page goes, chromedriver
    may answer for its button with a stale-element error or with "node does not belong to the document": both mean
    it is gone."""
    button.click()

    def gone(_):
        try:
            button.is_enabled()
            return False
        except WebDriverException:  # StaleElementReferenceException is one
            return True

    WebDriverWait(driver, 10).until(gone)


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def visit_every_page(driver, app, label):
    for path in PAGES:
        driver.get(app.base + path)
        title = driver.title
        assert "wearhouse" in title, f"{path}: title {title!r}: {driver.page_source[:300]}"
        assert title.split(" ·")[0] not in ("Not possible", "Store error", "Not found"), f"{path}: {title}"
        errors = console_errors(driver)
        assert not errors, f"{path}: console errors {errors}"
        name = path.strip("/").replace("/", "-").replace("?range=", "-") or "summary"
        driver.save_screenshot(os.path.join(SHOTS, f"{label}-{name}.png"))


def fill(store, now):
    """Heart rate every minute for the last 30 hours, steps every 10 minutes from two sources (the phone's
    overlapping the watch's), distance and energy; returns what was written per type."""
    lines = []
    start = now - datetime.timedelta(hours=30)
    moment = start
    while moment < now:
        minutes = int((moment - start).total_seconds() // 60)
        lines.append({"type": "heartRate", "start": moment.isoformat().replace("+00:00", "Z"),
                      "value": 60 + minutes % 50, "source": "org.example.strap", "subject": "alice"})
        if minutes % 10 == 0:
            stamp = moment.isoformat().replace("+00:00", "Z")
            end = (moment + datetime.timedelta(minutes=10)).isoformat().replace("+00:00", "Z")
            for source, steps in [("org.example.watch", 120), ("org.example.phone", 100)]:
                lines.append({"type": "stepCount", "start": stamp, "end": end, "value": steps, "source": source,
                              "subject": "alice"})
            lines.append({"type": "distanceWalkingRunning", "start": stamp, "end": end, "value": 80,
                          "source": "org.example.watch", "subject": "alice"})
            lines.append({"type": "activeEnergyBurned", "start": stamp, "end": end, "value": 4,
                          "source": "org.example.watch", "subject": "alice"})
        moment += datetime.timedelta(minutes=1)
    lines += measurements(now)
    lines.append(run(now))
    path = store + ".ndjson"
    with open(path, "w") as file:
        file.write("\n".join(json.dumps(line) for line in lines) + "\n")
    wearhouse("import-samples", path, "--store", store)
    wearhouse("me", "set", "dateOfBirth", "1986-01-15", "--store", store)


def run(now):
    """A half-hour run three hours ago, with a route of 60 locations round a circle (altitude and course unknown
    for some)."""
    start = (now - datetime.timedelta(hours=3)).replace(second=0, microsecond=0)
    locations = []
    for index in range(60):
        angle = index / 60 * 2 * math.pi
        locations.append([stamp(start + datetime.timedelta(seconds=30 * index)), 51.5 + 0.002 * math.sin(angle),
                          -0.1 + 0.003 * math.cos(angle), None if index % 7 == 0 else 12.5, 4.0, None, 2.8, None])
    return {"type": "workout", "start": stamp(start), "end": stamp(start + datetime.timedelta(minutes=30)),
            "source": "org.example.watch", "subject": "alice", "activity_type": "running", "duration_s": 1800,
            "total_distance_m": 5000, "routes": [{"locations": locations}]}


def stamp(moment):
    return moment.isoformat().replace("+00:00", "Z")


def measurements(now):
    """Weight each morning of the last 10 days (falling 0.1 kg a day), a blood pressure pair, body temperature and
    resting heart rate each day, the last three nights' sleep in stages, and a heartbeat series each hour of the
    last 30 (RR alternating by 20 ms: an RMSSD of 20 ms)."""
    lines = []
    today = now.replace(hour=0, minute=0)
    for day in range(10, -1, -1):
        morning = today - datetime.timedelta(days=day) + datetime.timedelta(hours=7)
        if morning > now:
            continue
        base = {"source": "org.example.scale", "subject": "alice"}
        lines.append({**base, "type": "bodyMass", "start": stamp(morning), "value": round(72 + day * 0.1, 1)})
        lines.append({**base, "type": "bloodPressureSystolic", "start": stamp(morning), "value": 118 + day})
        lines.append({**base, "type": "bloodPressureDiastolic", "start": stamp(morning), "value": 76 + day % 3})
        lines.append({**base, "type": "bodyTemperature", "start": stamp(morning), "value": 36.6})
        lines.append({**base, "type": "restingHeartRate", "start": stamp(morning), "value": 55 + day % 4})
    # The last three nights: 8 h in bed, up at 06:30 (or half an hour ago, when that is earlier); core, deep, core,
    # REM, awake, core (HealthKit's values 3, 4, 3, 5, 2, 3): 7.25 h asleep.
    stages = [(3, 60), (4, 90), (3, 120), (5, 60), (2, 15), (3, 105)]
    up = min(today + datetime.timedelta(hours=6, minutes=30), now - datetime.timedelta(minutes=30))
    for night in range(2, -1, -1):
        bed = up - datetime.timedelta(days=night, hours=8)
        base = {"source": "org.example.ring", "subject": "alice"}
        lines.append({**base, "type": "sleepAnalysis", "start": stamp(bed),
                      "end": stamp(bed + datetime.timedelta(hours=8)), "value": 0})
        moment = bed + datetime.timedelta(minutes=15)
        for value, minutes in stages:
            end = moment + datetime.timedelta(minutes=minutes)
            lines.append({**base, "type": "sleepAnalysis", "start": stamp(moment), "end": stamp(end), "value": value})
            moment = end
    for hour in range(30, 0, -1):
        start = now - datetime.timedelta(hours=hour)
        beats, offset = [], 0
        for index in range(60):
            rr = 1000 if index % 2 == 0 else 1020
            offset += rr
            beats.append({"offset_ms": offset, "rr_ms": rr, "gap": False})
        lines.append({"type": "heartbeatSeries", "start": stamp(start),
                      "end": stamp(start + datetime.timedelta(milliseconds=offset)), "beats": beats,
                      "source": "org.example.strap", "subject": "alice"})
    return lines


def count(store, type_name, start=None, end=None):
    """How many samples of the type start in [start, end) (all of them without a range)."""
    listed = wearhouse("samples", "--type", type_name, "--format", "json", "--store", store)
    samples = [json.loads(line) for line in listed.splitlines() if line.strip()]
    if start is None:
        return len(samples)
    return len([s for s in samples if start <= parse(s["start"]) < end])


def parse(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def lan_with_tls_and_password(folder):
    """A LAN listen (0.0.0.0; the test talks to it over 127.0.0.1 only): HTTPS with a self-signed certificate made
    here by openssl, checked by Python's ssl against that certificate, and the password form."""
    cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=wearhouse-test",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    hashed = subprocess.run([WEARHOUSE, "web", "--hash-password"], input="correct horse\n", capture_output=True,
                            text=True, timeout=60, check=True).stdout
    password_file = os.path.join(folder, "web.password")
    with open(password_file, "w") as file:
        file.write(hashed)
    app = WebApp(os.path.join(folder, "lan.db"), listen="0.0.0.0:0",
                 extra=["--tls-cert", cert, "--tls-key", key, "--password-file", password_file])
    try:
        assert app.login.startswith("https://0.0.0.0:"), app.login
        port = int(app.base.rsplit(":", 1)[1])
        trusted = ssl.create_default_context(cafile=cert)

        def request(method, path, body=None, cookie=None):
            connection = http.client.HTTPSConnection("127.0.0.1", port, context=trusted, timeout=20)
            headers = {"Content-Type": "application/x-www-form-urlencoded"} if body else {}
            if cookie:
                headers["Cookie"] = cookie
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode()
            connection.close()
            return response.status, response.getheader("Set-Cookie"), response.getheader("Location"), text

        status, _, _, text = request("GET", "/")
        assert status == 401 and 'name="password"' in text, (status, text[:200])
        status, cookie, _, text = request("POST", "/login", body="password=wrong")
        assert status == 401 and cookie is None and "Wrong password" in text, (status, cookie)
        status, cookie, location, _ = request("POST", "/login", body="password=correct+horse")
        assert status == 303 and location == "/" and cookie, (status, cookie)
        assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie
        status, _, _, text = request("GET", "/", cookie=cookie.split(";")[0])
        assert status == 200 and "<h1>Summary" in text, (status, text[:200])
        # A client that does not know the certificate refuses it.
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=20) as raw:
                ssl.create_default_context().wrap_socket(raw, server_hostname="127.0.0.1")
            raise AssertionError("an unknown self-signed certificate was accepted")
        except ssl.SSLCertVerificationError:
            pass
        # Plain HTTP to the TLS port gets no page.
        with socket.create_connection(("127.0.0.1", port), timeout=20) as raw:
            raw.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = b""
            try:
                while chunk := raw.recv(4096):
                    answer += chunk
            except (ConnectionResetError, socket.timeout):
                pass
        assert b"HTTP/1.1 200" not in answer and b"Summary" not in answer, answer[:200]
    finally:
        app.stop()


def sensors(store):
    listed = wearhouse("sensors", "--json", "--store", store)
    return {entry["address"]: entry for entry in map(json.loads, listed.splitlines()) if entry}


def characteristics(store, subject=None):
    return json.loads(wearhouse("me", "--json", "--store", store, *(["--subject", subject] if subject else [])))


def raw(app, method, path, body=None, headers=None):
    """One request with http.client (no browser): status, headers, body."""
    host, port = app.base.split("//")[1].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=20)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    text = response.read().decode(errors="replace")
    connection.close()
    return response.status, dict(response.getheaders()), text


def demo_checks(driver, folder):
    """The demo store (`wearhouse demo`: eight simulated sensors worn or used by alice and bob): every page; a sensor's
    wearer and location changed and another forgotten after its confirmation; the Me page of a person picked."""
    demo = os.path.join(folder, "demo")
    subprocess.run([WEARHOUSE, "demo", "--duration", "4", "--dir", demo], capture_output=True, timeout=120,
                   check=True)
    store = os.path.join(demo, "health.db")
    app = WebApp(store)
    try:
        driver.delete_all_cookies()
        driver.get(app.login)
        visit_every_page(driver, app, "demo")

        before = sensors(store)
        assert len(before) == 8, before
        driver.get(app.base + "/sensors")
        assert "%" in driver.find_element(By.CSS_SELECTOR, "table.sensors").text, "no battery shown"
        section = driver.find_elements(By.CSS_SELECTOR, "section.sensor")[0]
        address = section.find_element(By.NAME, "address").get_attribute("value")
        section.find_element(By.NAME, "subject").clear()
        section.find_element(By.NAME, "subject").send_keys("carol")
        section.find_element(By.NAME, "location").clear()
        section.find_element(By.NAME, "location").send_keys("wrist")
        submit(driver, section.find_element(By.TAG_NAME, "button"))
        after = sensors(store)[address]
        assert after["subject"] == "carol" and after["location"] == "wrist", after
        assert not console_errors(driver)

        section = driver.find_elements(By.CSS_SELECTOR, "section.sensor")[1]
        gone = section.find_element(By.NAME, "address").get_attribute("value")
        submit(driver, section.find_element(By.CSS_SELECTOR, "button.danger"))
        assert driver.find_element(By.TAG_NAME, "h1").text.startswith("Forget"), driver.page_source[:300]
        assert gone in sensors(store), "forgotten before the confirmation"
        driver.save_screenshot(os.path.join(SHOTS, "demo-forget-confirmation.png"))
        submit(driver, driver.find_element(By.CSS_SELECTOR, "#confirm button"))
        left = sensors(store)
        assert gone not in left and len(left) == 7, left
        assert not console_errors(driver)

        # The Me page of bob, picked in the people picker.
        driver.get(app.base + "/me")
        picker = driver.find_element(By.ID, "subject-picker")
        names = [o.get_attribute("value") for o in picker.find_elements(By.TAG_NAME, "option")]
        assert {"alice", "bob", "carol"} <= set(names), names
        Select(picker.find_element(By.NAME, "subject")).select_by_value("bob")
        submit(driver, picker.find_element(By.TAG_NAME, "button"))
        assert driver.current_url == app.base + "/me" and "(bob)" in driver.find_element(By.TAG_NAME, "h1").text
        form = driver.find_element(By.ID, "me")
        driver.execute_script("arguments[0].value = arguments[1]", form.find_element(By.NAME, "dateOfBirth"),
                              "1990-02-02")
        Select(form.find_element(By.NAME, "bloodType")).select_by_value("abPositive")
        Select(form.find_element(By.NAME, "fitzpatrickSkinType")).select_by_value("III")
        submit(driver, form.find_element(By.TAG_NAME, "button"))
        bob = characteristics(store, "bob")
        assert bob.get("dateOfBirth") == "1990-02-02" and bob.get("bloodType") == "abPositive", bob
        assert bob.get("fitzpatrickSkinType") == "III", bob
        assert "dateOfBirth" not in characteristics(store), "the store's own person changed too"
        assert driver.find_element(By.ID, "age").text.startswith("age "), "no age shown"
        driver.save_screenshot(os.path.join(SHOTS, "demo-me-bob.png"))
        # Cleared again: an empty field unsets.
        form = driver.find_element(By.ID, "me")
        Select(form.find_element(By.NAME, "bloodType")).select_by_value("")
        submit(driver, form.find_element(By.TAG_NAME, "button"))
        assert "bloodType" not in characteristics(store, "bob")
        assert not console_errors(driver)
    finally:
        app.stop()


def expected_latest(now):
    """What the summary must show from measurements(now): the latest weight and blood pressure."""
    today = now.replace(hour=0, minute=0)
    for day in range(0, 11):
        if today - datetime.timedelta(days=day) + datetime.timedelta(hours=7) <= now:
            return round(72 + day * 0.1, 1), 118 + day, 76 + day % 3
    raise AssertionError("no morning")


def card(driver, title):
    for section in driver.find_elements(By.CSS_SELECTOR, "section.card"):
        if section.find_element(By.TAG_NAME, "h2").text == title:
            return section
    raise AssertionError(f"no card {title!r}")


def summary_and_type_pages(driver, app, now):
    weight, systolic, diastolic = expected_latest(now)
    driver.get(app.base + "/")
    assert card(driver, "Weight").find_element(By.CSS_SELECTOR, "p.big").text == f"{weight:g} kg"
    assert card(driver, "Blood pressure").find_element(By.CSS_SELECTOR, "p.big").text == \
        f"{systolic}/{diastolic} mmHg"
    assert card(driver, "Body temperature").find_element(By.CSS_SELECTOR, "p.big").text == "36.6 °C"
    sleep = card(driver, "Last night's sleep")
    assert sleep.find_element(By.CSS_SELECTOR, "p.big").text in ("7.2 h asleep", "7.3 h asleep"), sleep.text
    assert "asleepDeep\n1.5 h" in sleep.text, sleep.text
    for title in ["Resting heart rate", "Weight", "Blood pressure", "Body temperature", "Last night's sleep"]:
        assert card(driver, title).find_elements(By.CSS_SELECTOR, "svg.spark path"), f"{title}: no sparkline"
    driver.save_screenshot(os.path.join(SHOTS, "filled-summary-cards.png"))

    # Heart rate: zones from the date of birth (1986-01-15) and the RR series' RMSSD (RR alternating by 20 ms).
    born = datetime.date(1986, 1, 15)
    today = now.date()
    age = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
    driver.get(app.base + "/type/heartRate")
    assert f"Maximum {220 - age} bpm" in driver.find_element(By.ID, "zones").text
    assert driver.find_elements(By.CSS_SELECTOR, "svg.chart path.zone"), "no zone lines"
    dots = [t.get_attribute("textContent") for t in driver.find_elements(By.CSS_SELECTOR, "circle.dot title")]
    assert dots and all(t.endswith(": 20.0 ms") for t in dots), dots
    driver.save_screenshot(os.path.join(SHOTS, "filled-heart-rate-zones-hrv.png"))
    # Weight: the trend line falls (0.1 kg a day).
    driver.get(app.base + "/type/bodyMass?range=month")
    trend = driver.find_element(By.CSS_SELECTOR, "path.trend title").get_attribute("textContent")
    assert trend.startswith("trend -0.10 kg"), trend
    # Sleep: last night as a timeline, a bar per stage sample.
    driver.get(app.base + "/type/sleepAnalysis")
    stages = driver.find_elements(By.CSS_SELECTOR, "svg.chart rect.stage")
    assert len(stages) == 7, len(stages)  # in bed, and six stages
    driver.save_screenshot(os.path.join(SHOTS, "filled-sleep-timeline.png"))
    assert not console_errors(driver)


def security(driver, app, store):
    """No page or action without the session; a form without the CSRF token, with a wrong one or from another
    origin is refused and changes nothing; a body over 1 MiB gets 413; a foreign Host 421."""
    for path in PAGES:
        status, _, text = raw(app, "GET", path)
        assert status == 401 and "<h1" not in text, (path, status)
    for path in ["/add", "/me", "/delete", "/delete/confirm", "/apps/decide", "/sensors/forget", "/subject",
                 "/priority/stepCount"]:
        status, _, _ = raw(app, "POST", path, body="type=heartRate&value=1",
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 401, (path, status)
    driver.get(app.base + "/me")
    cookie = "wearhouse_session=" + driver.get_cookie("wearhouse_session")["value"]
    token = driver.find_element(By.CSS_SELECTOR, "#me input[name=csrf]").get_attribute("value")
    form = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie}
    before = characteristics(store)
    for body, extra in [("bloodType=oNegative", {}), ("bloodType=oNegative&csrf=" + "0" * 64, {}),
                        (f"bloodType=oNegative&csrf={token}", {"Origin": "http://evil.example"})]:
        status, _, _ = raw(app, "POST", "/me", body=body, headers={**form, **extra})
        assert status == 403, (body, extra, status)
    assert characteristics(store) == before, "a refused form changed the store"
    status, _, _ = raw(app, "POST", "/me", body=f"bloodType=oNegative&csrf={token}", headers=form)
    assert status == 303 and characteristics(store).get("bloodType") == "oNegative", status
    # A declared body over 1 MiB is answered 413 before it is sent.
    host, port = app.base.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=20) as connection:
        connection.sendall(f"POST /add HTTP/1.1\r\nHost: {host}:{port}\r\nCookie: {cookie}\r\nContent-Type: "
                           f"application/x-www-form-urlencoded\r\nContent-Length: {2 << 20}\r\n\r\n".encode()
                           + b"x" * 1024)
        answer = connection.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
    status, _, _ = raw(app, "GET", "/", headers={"Cookie": cookie, "Host": "rebound.example:80"})
    assert status == 421, status
    status, _, _ = raw(app, "GET", "/", headers={"Cookie": cookie})
    assert status == 200, status


def main():
    if not os.access(WEARHOUSE, os.X_OK):
        print(f"{WEARHOUSE} is missing: swift build --product wearhouse")
        return 1
    shutil.rmtree(SHOTS, ignore_errors=True)
    os.makedirs(SHOTS)
    folder = tempfile.mkdtemp(prefix="wearhouse-web-")
    driver = browser()
    processes = []
    try:
        # The empty store.
        empty = os.path.join(folder, "empty.db")
        app = WebApp(empty)
        processes.append(app)

        def login_once():
            driver.get(app.base + "/")
            assert "Not logged in" in driver.page_source, driver.page_source[:200]
            driver.get(app.login)
            assert driver.current_url == app.base + "/", driver.current_url
            cookie = driver.get_cookie("wearhouse_session")
            assert cookie and cookie["httpOnly"] and cookie.get("sameSite") == "Strict", cookie
            driver.delete_all_cookies()
            driver.get(app.login)
            assert "not valid" in driver.page_source, "the login token was accepted twice"
            driver.get_log("browser")  # the 401s above are console errors by design

        check("the login token is exchanged for an HttpOnly, SameSite=Strict cookie, once", login_once)
        app.stop()
        processes.remove(app)
        app = WebApp(empty)
        processes.append(app)
        driver.delete_all_cookies()
        driver.get(app.login)
        check("every page of an empty store loads without console errors", lambda: visit_every_page(driver, app, "empty"))
        app.stop()
        processes.remove(app)
        check("a LAN listen serves HTTPS (openssl's self-signed certificate, Python's ssl) behind the password",
              lambda: lan_with_tls_and_password(folder))

        # The filled store, with the real service on a private bus and an app asking for heart rate.
        store = os.path.join(folder, "health.db")
        now = datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0)
        fill(store, now)
        daemon = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        processes.append(daemon)
        address = daemon.stdout.readline().strip()
        service = subprocess.Popen([WEARHOUSE, "run", "--store", store, "--bus", address, "--api", address],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(service)
        bus = dbus.bus.BusConnection(address)
        deadline = time.monotonic() + 15
        while not bus.name_has_owner("org.wearhouse.Health1"):
            assert time.monotonic() < deadline and service.poll() is None, "the service did not take its name"
            time.sleep(0.05)
        health = dbus.Interface(bus.get_object("org.wearhouse.Health1", "/org/wearhouse/Health1"),
                                "org.wearhouse.Health1")
        app_id, _ = health.Identity()
        _, pending = health.RequestAuthorization(["heartRate"], dbus.Array([], signature="s"))
        assert pending, "the request is not pending"
        since = int((now - datetime.timedelta(hours=2)).timestamp() * 1000)
        until = int(now.timestamp() * 1000)

        def readable():
            return int(health.Statistics("heartRate", dbus.Int64(since), dbus.Int64(until), {}).get("count", 0))

        assert readable() == 0, "the app reads heart rate before any grant"

        app = WebApp(store)
        processes.append(app)
        driver.delete_all_cookies()
        driver.get(app.login)
        check("every page of a filled store loads without console errors",
              lambda: visit_every_page(driver, app, "filled"))

        def add_heart_rate():
            driver.get(app.base + "/add")
            form = driver.find_element(By.ID, "add")
            Select(form.find_element(By.NAME, "type")).select_by_value("heartRate")
            form.find_element(By.NAME, "value").send_keys("187")
            moment = (now - datetime.timedelta(minutes=90, seconds=30)).strftime("%Y-%m-%dT%H:%M:%S")
            driver.execute_script("arguments[0].value = arguments[1]", form.find_element(By.NAME, "start"), moment)
            submit(driver, form.find_element(By.TAG_NAME, "button"))
            assert "/type/heartRate?" in driver.current_url, driver.current_url
            assert ">187<" in driver.page_source, "the new sample is not listed"
            titles = [t.get_attribute("textContent") for t in driver.find_elements(By.CSS_SELECTOR, "svg.chart title")]
            # the hour's band now reaches 187 from the imported values (60-109) below it
            assert any("-187, avg" in t and not t.split(": ")[1].startswith("187") for t in titles), titles
            listed = wearhouse("samples", "--type", "heartRate", "--format", "json", "--store", store)
            entered = [json.loads(line) for line in listed.splitlines() if '"value":187' in line.replace(" ", "")]
            assert entered and entered[0]["metadata"].get("wasUserEntered") is True, entered
            assert not console_errors(driver)
            driver.save_screenshot(os.path.join(SHOTS, "filled-added-heart-rate.png"))

        check("the summary's cards show the latest weight, blood pressure, temperature and last night's sleep; the "
              "heart-rate page its zones and HRV, weight its trend, sleep its stages",
              lambda: summary_and_type_pages(driver, app, now))
        check("no page or action without the session; forged, wrong-token and cross-origin forms refused; "
              "large bodies 413; foreign Host 421", lambda: security(driver, app, store))
        check("a heart rate added by the form shows in the day's chart and samples", add_heart_rate)

        def paging():
            driver.get(app.base + "/type/heartRate?range=week")
            first = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.samples tr")]
            assert len(first) == 51, len(first)  # the header and 50 samples
            submit(driver, driver.find_element(By.CSS_SELECTOR, "a.next"))
            assert "range=week" in driver.current_url and "page=2" in driver.current_url, driver.current_url
            assert "Page 2" in driver.page_source
            second = [row.text for row in driver.find_elements(By.CSS_SELECTOR, "table.samples tr")[1:]]
            assert second and second[0] not in first, "page 2 repeats page 1"
            assert not console_errors(driver)

        check("the samples below a chart are paged, keeping the range", paging)

        def approve():
            driver.get(app.base + "/apps")
            assert app_id in driver.page_source, f"{app_id} is not listed"
            submit(driver, driver.find_element(By.CSS_SELECTOR, "button[value=approve]"))
            assert "Asks to read" not in driver.page_source, "still pending"
            assert readable() > 0, "the app still cannot read heart rate over D-Bus"
            driver.save_screenshot(os.path.join(SHOTS, "filled-apps-approved.png"))

        check("approving the pending request lets the app read over D-Bus", approve)

        def reorder_sources():
            def rank(order):
                driver.get(app.base + "/type/stepCount")
                form = driver.find_element(By.ID, "priority")
                entries = [e.get_attribute("value") for e in form.find_elements(By.NAME, "entry")]
                assert sorted(entries) == ["org.example.phone[]", "org.example.watch[]"], entries
                for entry, field in zip(entries, form.find_elements(By.NAME, "rank")):
                    field.clear()
                    field.send_keys(str(order.index(entry) + 1))
                submit(driver, form.find_element(By.CSS_SELECTOR, "button[value=set]"))
                assert driver.current_url.startswith(app.base + "/type/stepCount"), driver.current_url
                assert not console_errors(driver)
                shown = json.loads(wearhouse("priority", "show", "--json", "--store", store))
                assert shown["stepCount"]["order"] == order, shown
                return float(driver.find_element(By.ID, "merged-total").text.replace(",", ""))

            # Both sources counted the same ten minutes: the one ranked first gives the day's total.
            phone_first = rank(["org.example.phone[]", "org.example.watch[]"])
            watch_first = rank(["org.example.watch[]", "org.example.phone[]"])
            driver.save_screenshot(os.path.join(SHOTS, "filled-priority.png"))
            # (the page shows whole steps: the day's first and last samples may be cut by its borders)
            assert phone_first > 0 and abs(watch_first - phone_first * 1.2) <= 2, (phone_first, watch_first)
            submit(driver, driver.find_element(By.CSS_SELECTOR, "#priority button[value=reset]"))
            assert "stepCount" not in json.loads(wearhouse("priority", "show", "--json", "--store", store))

        check("reordering the sources changes the daily step total as the merge says", reorder_sources)

        def delete_range():
            first = (now - datetime.timedelta(hours=5)).replace(minute=0)
            last = first + datetime.timedelta(hours=1)
            start, end = first.strftime("%Y-%m-%dT%H:%M:%S"), last.strftime("%Y-%m-%dT%H:%M:%S")
            inside = count(store, "stepCount", first, last)
            total = count(store, "stepCount")
            assert inside == 12, inside  # 6 ten-minute samples from each of two sources
            driver.get(app.base + "/type/stepCount")
            form = driver.find_element(By.ID, "delete-range")
            for name, value in [("from", start), ("to", end)]:
                driver.execute_script("arguments[0].value = arguments[1]", form.find_element(By.NAME, name), value)
            submit(driver, form.find_element(By.TAG_NAME, "button"))
            assert driver.find_element(By.ID, "count").text == "12", driver.page_source[:500]
            driver.save_screenshot(os.path.join(SHOTS, "filled-delete-confirmation.png"))
            submit(driver, driver.find_element(By.CSS_SELECTOR, "#confirm button"))
            assert count(store, "stepCount", first, last) == 0
            assert count(store, "stepCount") == total - 12, "other samples went too"
            assert count(store, "heartRate", first, last) > 0, "another type's samples went"

        check("deleting a range removes exactly the samples the confirmation counted", delete_range)

        def download():
            cookie = "wearhouse_session=" + driver.get_cookie("wearhouse_session")["value"]
            status, headers, text = raw(app, "GET", "/export/download?format=ndjson", headers={"Cookie": cookie})
            assert status == 200, status
            assert headers.get("Content-Type") == "application/x-ndjson", headers
            exported = wearhouse("export", "--format", "ndjson", "--store", store)
            assert text == exported, f"{len(text)} bytes downloaded, {len(exported)} exported"
            copy = store + ".copy.db"
            done = subprocess.run([WEARHOUSE, "import-samples", "-", "--store", copy], input=text, text=True,
                                  capture_output=True, timeout=60)
            assert done.returncode == 0, done.stderr
            for type_name in ["heartRate", "stepCount", "bloodPressureSystolic", "sleepAnalysis"]:
                assert count(copy, type_name) == count(store, type_name), type_name
            copied = [json.loads(line) for line in
                      wearhouse("samples", "--type", "workout", "--format", "json", "--store", copy).splitlines()]
            assert len(copied) == 1 and len(copied[0]["routes"][0]["locations"]) == 60, copied
            status, headers, gpx = raw(app, "GET", "/export/download?format=gpx", headers={"Cookie": cookie})
            assert status == 200 and headers.get("Content-Type") == "application/gpx+xml", (status, headers)
            assert gpx == wearhouse("export", "--format", "gpx", "--store", store), gpx[:300]
            assert gpx.count("<trkpt ") == 60 and gpx.endswith("</trk>\n</gpx>\n"), gpx[-300:]

        check("the NDJSON download is what `wearhouse export` writes, the workout and its route included, and "
              "imports back; the GPX download is `export --format gpx`", download)

        def workouts():
            driver.get(app.base + "/type/workout?range=week")
            rows = driver.find_elements(By.CSS_SELECTOR, "table.samples tr")
            assert len(rows) == 2, driver.page_source[:800]
            assert "running 30 min, 5000 m, route of 60 locations" in rows[1].text, rows[1].text
            route = driver.find_element(By.CSS_SELECTOR, "svg.route")
            assert route.get_attribute("aria-label") == "route of 60 locations", route.get_attribute("aria-label")
            assert route.find_element(By.TAG_NAME, "path").get_attribute("d").count("L") == 59
            driver.save_screenshot(os.path.join(SHOTS, "filled-workout-route.png"))
            rows[1].find_element(By.NAME, "id").click()
            submit(driver, driver.find_element(By.CSS_SELECTOR, "#samples button"))
            assert driver.find_element(By.ID, "count").text == "1", driver.page_source[:500]
            submit(driver, driver.find_element(By.CSS_SELECTOR, "#confirm button"))
            listed = wearhouse("samples", "--type", "workout", "--format", "json", "--store", store)
            assert listed.strip() == "", listed[:300]
            assert "No workouts in this range." in driver.page_source, driver.page_source[:800]
            # A ride across the antimeridian (off Fiji) is drawn as the short line it is, not across the square.
            ride = run(now)
            ride["activity_type"] = "cycling"
            for index, location in enumerate(ride["routes"][0]["locations"]):
                location[1], location[2] = -16.5, (179.95 + index * 0.002 + 180) % 360 - 180
            done = subprocess.run([WEARHOUSE, "import-samples", "-", "--store", store], input=json.dumps(ride) + "\n",
                                  text=True, capture_output=True, timeout=60)
            assert done.returncode == 0, done.stderr
            driver.get(app.base + "/type/workout?range=week")
            path = driver.find_element(By.CSS_SELECTOR, "svg.route path").get_attribute("d")
            xs = [float(point.split()[0]) for point in path.lstrip("M").split("L")]
            assert max(xs) - min(xs) > 200 and xs == sorted(xs), xs[:5]  # west to east, one sweep
            ys = [float(point.split()[1]) for point in path.lstrip("M").split("L")]
            assert max(ys) - min(ys) < 1, ys[:5]  # a line along one latitude

        check("a workout is listed with its route drawn, and deleting it ticked removes it", workouts)
        app.stop()
        processes.remove(app)
        check("the demo store: every page; a sensor's wearer and location changed, another forgotten after its "
              "confirmation; the Me page of the person picked", lambda: demo_checks(driver, folder))
    finally:
        driver.quit()
        for process in reversed(processes):
            if isinstance(process, WebApp):
                process.process.terminate()
            else:
                process.terminate()
        shutil.rmtree(folder, ignore_errors=True)
    print(f"web: {results['passed']} passed, {results['failed']} failed")
    return 0 if results["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
