"""Starts a Python child process with a worker thread and waits for it."""
import subprocess
import sys
import os

child = os.path.join(os.path.dirname(os.path.abspath(__file__)), "threads.py")
subprocess.run([sys.executable, child, sys.argv[1] if len(sys.argv) > 1 else "1.5"], check=True)
