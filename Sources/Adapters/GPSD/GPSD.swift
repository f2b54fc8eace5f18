// The libgps position source lands here (issue 4).
import CGPS
