# just a comment
   # an indented comment

#another one
